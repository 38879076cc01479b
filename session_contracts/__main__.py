import sys

from session_contracts.cli import main

sys.exit(main())
