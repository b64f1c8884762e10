"""One request, from start to end: the spine every measuring command follows, and the places cases run in.

preflight → execute → save → conclude (→ record), written once:

- requests: what a command asked, typed (selection, outputs, gate, recording)
- planning: a selection made a plan
- preflight: every output path checked before anything runs
- interrupts: Ctrl-C and SIGTERM, one policy (exit 130/143, finished cases saved)
- saver: each finished case kept as the work goes, the results file written once
- recorder: reports into the history store (`--record`, `record FILE...`)
- reading: results files read back (`show`, `compare`, `--baseline`, `gather`)
- spine: `Place`, the interface for where cases run; `drive` and `conclude`
- places: local (here, in workers), jobs and following (submitit/Slurm, `gather`), paired (`ab`: sides and
  side_variables)
- commands: which place runs `run`
"""
