"""The oracle: our reference producer (``producer``), which answers the producer
protocol for every operation with the seeds' semantics in ``session_contracts.health``,
``.feedback``, ``.recap``, ``.runrecord`` and ``.journal``.

Nothing here imports the judge (``conformance/judge``): the reference answers cases, it
never certifies anything; ``tests/unit/test_layering.py`` holds that rule.
"""
