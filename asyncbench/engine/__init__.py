"""The engine: a validated plan becomes results, case by case.

`runner` expands the plan and runs each case (in a worker process from
`isolation` by default); `rounds` turns paired rounds into metrics with
intervals; `memory`, `sanity` and `trace` add the memory windows, the
impossible-result warnings and the timelines; `environment` records what
the numbers were measured on.
"""
