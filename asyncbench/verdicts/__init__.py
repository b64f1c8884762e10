"""Verdicts: what a run concludes, in one vocabulary (pass, fail, inconclusive, not measured).

`checks` judges `expect:` checks against the 95% intervals, `compare` a run
against a baseline, and `outcome` turns every verdict, error and skip into
the exit code and its reasons. Reads results only: no backend, no workload.
"""
