"""What certify sends a producer: the case strategies and the explicit cases of each check."""
