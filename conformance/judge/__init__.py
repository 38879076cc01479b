"""The judge: certifies any producer against the reference.

``certify`` (property cases per check, ``certify``/``cases.operations``/``cases.documents``),
``golden`` (fixed fixtures, ``golden``), the captured-document ``check``
(``captured``), reports (``report``, ``check_report``) and the harness that
runs a producer in any language (``runner``). The judge may call the
reference (``conformance/reference``) to learn the expected answer; never the
other way round.
"""
