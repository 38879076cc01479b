"""The oracle: our reference producer and the reference semantics it serves.

One package per contract (``journal``, ``recap``, ``health``, ``feedback``,
``runrecord``) and the producer that speaks the protocol for all of them
(``producer``). Nothing here imports the judge (``conformance/judge``): the
reference answers cases, it never certifies anything; ``tests/unit/test_layering.py``
holds that rule.
"""
