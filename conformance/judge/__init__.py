"""The judge: certifies any producer against the reference.

``checks`` (the catalogue: one ``Check`` a rule, with its judge from ``judges``, its random
trials and its explicit cases from ``cases``), ``certify`` (runs the checks as properties),
``golden`` (fixed fixtures), ``check_cli`` (the ``check`` command: captured documents), the reports
(``report``, ``report_html``, ``junit``, ``check_report``) and ``runner`` (the harness that
runs a producer in any language). The judge may call the reference
(``conformance/reference``) to learn the expected answer; never the other way round.
"""
