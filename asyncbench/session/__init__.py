"""One request, from start to end: the spine every measuring command follows, and the places cases run in.

preflight → start → drive → save → conclude (judge, write, record), written once (spine.run); each place fills its hooks:

- requests: what a command asked, typed (`Request`: selection, outputs, gate, progress; `RunRequest`, `ABRequest`)
- planning: a selection made a plan
- preflight: every output path checked before anything runs
- interrupts: Ctrl-C and SIGTERM, one policy (exit 130/143, finished cases saved)
- saver: each finished case kept as the work goes, the results file written once
- recorder: reports into the history store (`--record`, `record FILE...`)
- reading: results files read back (`show`, `compare`, `--baseline`, `gather`)
- spine: `run` (the sequence), `Place` and `Conclusion` (its hooks), `drive`, `conclude`, `Ended`
- run_conclusion: how `run`, `gather` and `merge` conclude, and their preflight
- places: local (`run` here, `--shard`), jobs then following (`run --executor`, `gather`), shards (`merge`), paired
  (`ab`: sides, side_imports, side_variables, block_progress)
- commands: which place runs `run`
"""
