"""Verdicts: what a run concludes, in one vocabulary (pass, fail, inconclusive, not measured).

`checks` judges `expect:` checks from intervals at their share of the run's
false-alarm rate (results.budget), `compare` a run against a baseline and
`paired` an `ab` run against the margin, and `outcome` turns every verdict,
error and skip into the exit code and its reasons. Reads results only: no backend, no workload.
"""
