"""The click layer, by command family: parse the command line, hand it to a session, print what came back, exit.

Exit codes (errors.py): 0 all good · 1 a gate failed (a check failed, was
inconclusive or not measured; a regression; nothing measured; --strict and
a skip) · 2 bad input, one clear line, never a traceback · 3 some cases
errored while the rest ran and were saved · 130/143 interrupted, what
finished is saved. Modules beyond click are imported inside the commands
that need them, so `--help` starts fast; nothing here runs, judges or
formats: `session` runs, `verdicts` judge, `report` formats.

`group` holds the command group and how the CLI prints; `options` the
options several commands share, each read once into a typed value; the
commands live by family: `running` (run, gather, merge), `gates` (compare,
ab), `history` (record, history, report), `inspecting` (list, devices,
validate, show). Importing this package registers them all on `main`.
"""

from __future__ import annotations

from asyncbench.cli import gates, history, inspecting, running  # noqa: F401 - each registers its commands on `main`
from asyncbench.cli.group import main

__all__ = ["main"]
