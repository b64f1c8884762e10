"""E-divisive means with a significance test: Apache Otava 0.8.0's change-point analysis, kept here as its release has it.

Otava (formerly Hunter; Fleming et al. 2023, https://doi.org/10.1145/3578244.3583719) is the analysis
history.changes calls. Its package cannot be a requirement: its only release pins numpy==2.2.0 (the whole
environment's numpy, the very thing a user benchmarks) and scipy below 1.17, and pulls its own command line's
BigQuery, Slack and PostgreSQL clients; installed without them (`pip install --no-deps`), every later pip printed
an ERROR block about them. Its analysis needs numpy and scipy only, both asyncbench's own requirements: these
modules are Otava's `analysis.py` and `change_point_divisive/` (Apache License 2.0: LICENSE and NOTICE beside
them, shipped in the wheel), each changed only in its imports, so that `pip install 'asyncbench[history]'` is the
whole install and the change points found are Otava's own.

To take a later Otava release: copy the same files over these and make the same import change
(`otava.change_point_divisive.` → `asyncbench.history.edivisive.`); tests/history/ holds the behaviour.
"""
