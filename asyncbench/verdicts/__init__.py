"""Verdicts: what a run concludes, in one vocabulary (pass, fail, inconclusive, not measured).

`checks` judges `expect:` checks from intervals at their share of the run's
false-alarm rate (results.budget), `margin` labels a ratio's interval
against the margin (results.labels.Label: the one place a label is decided),
for `compare` (a run against a baseline) and for `ab`'s paired verdicts,
`paired` concludes an `ab` run, and `outcome` turns every verdict,
error and skip into the exit code and its reasons. Reads results only: no backend, no workload.
"""
