"""Everything a person or another tool reads about a run: one view model, many writers.

`view` builds the presentation of a report (tables, metric lines, readings,
bars, notes, checks, the outcome) once; each writer only formats it. The
registry in `writers` feeds `run`'s output options and `show --format`.
Reads results only: never a backend or the live workload registry.
"""
