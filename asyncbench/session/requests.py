"""What a command asked, read once from the command line into typed parts: the selection, the outputs, the gate.

The CLI parses every option where it reads it (a margin is a number here, a
KEY=VALUE list a mapping), so the session never parses a string again and a
typo is one line, exit 2, before anything runs. `run` and `gather` share
the outputs, the gate and the recording; `ab` shares the selection
(session.paired.ABRequest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from asyncbench.results.shards import Shard
from asyncbench.verdicts.compare import DEFAULT_MAX_REGRESSION


@dataclass(frozen=True)
class Selection:
    """What to run: the configs (none: the built-in suite, or the -w workloads), and the command line's say over them."""

    configs: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()
    quick: bool = False


@dataclass(frozen=True)
class Outputs:
    """The files a finished report is written to: the results file (-o, journaled as the cases finish) and the
    other writers' (writer name -> file: markdown, csv, github-benchmark, plot)."""

    json_path: str | None = None
    files: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Gate:
    """How a finished report is judged: against --baseline with its margin (a fraction: 0.1 is 10%), --strict
    (a skip fails), --allow-inconclusive (an undecided verdict passes)."""

    baseline: str | None = None
    max_regression: float = DEFAULT_MAX_REGRESSION
    strict: bool = False
    allow_inconclusive: bool = False


@dataclass(frozen=True)
class Recording:
    """Whether the report goes into the history when it ends (`--record`), which one (`--history`; None: the
    default), under which label."""

    record: bool = False
    history: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class RunRequest:
    """What `asyncbench run` (or `gather`, which selects nothing) was asked."""

    selection: Selection = Selection()
    outputs: Outputs = Outputs()
    gate: Gate = Gate()
    recording: Recording = Recording()
    #: each case in a worker process (False: --in-process)
    isolate: bool = True
    trace_dir: str | None = None
    #: take each case's census of where its steps waited (`--syncs`: Result.syncs)
    syncs: bool = False
    #: progress on stderr (-q, --no-progress: none), and more of it (-v): report.progress
    progress: bool = True
    verbose: bool = False
    #: the executor's settings the command line gave (--executor, --per, --partition...), as a config's `executor:` keys
    executor: Mapping[str, Any] = field(default_factory=dict)
    #: the one part of the plan to run here (`--shard I/N`, one job of a CI matrix; None: the whole plan)
    shard: Shard | None = None
