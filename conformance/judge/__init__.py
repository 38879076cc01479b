"""The judge: certifies any producer against the reference.

``certify`` (property cases per check, ``_certify``/``_cases``/``_strategies``),
``golden`` (fixed fixtures, ``_golden``), the captured-document ``check``
(``_captured``), reports (``_report``, ``_check_report``) and the harness that
runs a producer in any language (``_runner``). The judge may call the
reference (``conformance/reference``) to learn the expected answer; never the
other way round.
"""
