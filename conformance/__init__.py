"""The conformance suite: the judge (certify, golden, check), the reference producer (the
oracle), the producer protocol and the golden fixtures."""
