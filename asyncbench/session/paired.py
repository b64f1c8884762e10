"""`asyncbench ab`: the same selection as `run`, measured on two sides in one run, paired round by round.

The spine as `run`'s (session.spine): each side's source tree is checked
out (session.sides: a temporary git worktree of --base / --head, removed
afterwards; the head defaults to the working tree), each side reads the
config and every file it names from its own tree, and its worker imports
that tree first. --base-python runs the base side under another
environment, --base-env / --head-env set variables on one side (shown with
the values of secret-looking names masked: session.side_variables). The
place (`Pairs`) pairs every case present on both sides; Ctrl-C or SIGTERM
keep what was decided, saved as `run` saves (a second SIGTERM ignored
meanwhile). Everything wrong with the input, output paths included, is one
line and exit 2 before anything runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import math
import platform
import re
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from asyncbench.errors import InputError
from asyncbench.host import facts as host_facts
from asyncbench.report import paired as views
from asyncbench.results import blocks, budget, outputs, units
from asyncbench.results.model import Case
from asyncbench.results.paired import ABReport, PairedCase, Side, dumps
from asyncbench.session import block_progress, planning, preflight, sides, spine
from asyncbench.session.requests import Selection
from asyncbench.session.side_imports import SideImports
from asyncbench.session.side_variables import scrubber, shown
from asyncbench.session.sides import Tree
from asyncbench.verdicts import paired as verdicts
from asyncbench.verdicts.outcome import Outcome
from asyncbench.version import __version__

if TYPE_CHECKING:
    pass

Say = Callable[[str], None]
IDLE_SIDE = "frozen with SIGSTOP between its samples (no spinning thread pool, GC or engine thread competes); user thread settings kept"
# Two minutes: what a pull request's check can wait for. A millisecond numpy or torch case decides a 1% margin in
# 5–30 s of it; the textbook's slow cases (conversion's print, training_memory) cannot resolve 2% in it and say what
# they resolved instead.
DEFAULT_GATE_TIME_S = 120.0
# The cap when --gate-time-max is not given: three times the target (6 minutes for the default 2). The looks are
# planned over the blocks the cap holds, so a gate of torch cases on 2 cores (8-13 s a block) plans 27-45 of them and
# has looks a decided case stops at (from 12-14 blocks); the 12-16 blocks of 2 minutes alone allowed none before
# the last, and every case, however clear, ran the whole time. Three, not two: simulated gates of ci-gate.yaml's
# shape on unchanged code on a noisy day (blocks ±5-13%) failed INCONCLUSIVE in 100 of 100 with 2 minutes alone, 84
# with a 4-minute cap, 23 with 6 and 18 with 8 (benchmarks/ab_stopping.py, 100 gates each); on a quiet day the cap
# took the 3 of 100 failures to none, at 131 s median (121 s without) and 171 s at most.
GATE_TIME_MAX_FACTOR = 3.0
# The margin when --max-regression is not given: a gate measured in one run, paired, can hold a tighter margin than
# `run --baseline` across runs (10%).
DEFAULT_MARGIN = 0.05


@dataclass(frozen=True)
class ABRequest:
    """What `asyncbench ab` was asked: the selection as `run` takes it (its configs, -w, -b, -d, --set, --quick),
    the two sides (each side's variables parsed: side_variables.parse_env), the gate (its margin a fraction, its
    time in seconds) and the outputs."""

    selection: Selection = Selection()
    base: str | None = None
    head: str | None = None
    base_python: str | None = None
    base_env: Mapping[str, str] = field(default_factory=dict)
    head_env: Mapping[str, str] = field(default_factory=dict)
    max_regression: float = DEFAULT_MARGIN
    allow_inconclusive: bool = False
    family_error: float = budget.FAMILY_ERROR
    #: the gate's target time, given to its cases by how far each is from a decision (engine.gate_time)
    gate_time_s: float = DEFAULT_GATE_TIME_S
    #: its cap: undecided cases go on past the target up to it, and the looks are planned over it (None: the
    #: target times GATE_TIME_MAX_FACTOR)
    gate_time_max_s: float | None = None
    json_path: str | None = None
    markdown_path: str | None = None
    #: `--bmf`, `--junit`: the paired ratios as Bencher Metric Format, the verdicts as JUnit XML (report.bmf, report.junit)
    bmf_path: str | None = None
    junit_path: str | None = None
    #: progress on stderr (-q, --no-progress: none; -v: more): a line per block off a terminal (report.progress)
    progress: bool = True
    verbose: bool = False
    #: also take each side's census of where its step waits, once per case (`--syncs`): the points new on head
    syncs: bool = False

    def __post_init__(self) -> None:
        if self.gate_time_max_s is not None and self.gate_time_max_s < self.gate_time_s:
            raise InputError(
                f"--gate-time-max {units.seconds(self.gate_time_max_s)} is shorter than --gate-time "
                f"{units.seconds(self.gate_time_s)}: the cap is the most a gate takes, at least its target"
            )

    @property
    def gate_cap_s(self) -> float:
        """The most the gate measures for (past it only the grace blocks of engine.gate_time)."""
        return self.gate_time_s * GATE_TIME_MAX_FACTOR if self.gate_time_max_s is None else self.gate_time_max_s


@dataclass(frozen=True)
class ABSession:
    view: views.ABView
    code: int


# The units a --gate-time may carry, in seconds.
GATE_TIME_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0}
# Below this a gate cannot reach the first look of even the fastest case: FIRST_LOOK_BLOCKS (10) blocks, each a fresh
# pair of processes sampled at least BLOCK_MIN_S (0.5 s), is 5 s of sampling alone; with the pairs' starts a 1 ms
# numpy case took 9.1 s to its first look (11 blocks) beside a CPU hog on the 2-core runner.
MIN_GATE_TIME_S = 10.0


def parse_gate_time(text: str, option: str = "--gate-time") -> float:
    """'120', '90s', '2m' → seconds; InputError (naming `option`) for anything else, or under MIN_GATE_TIME_S."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*(s|m|min)?\s*", str(text))
    if match is None:
        raise InputError(f"{option} {text!r}: expected a duration such as 120, 90s or 2m")
    seconds = float(match.group(1)) * GATE_TIME_UNITS[match.group(2) or ""]
    if not MIN_GATE_TIME_S <= seconds <= 86400:
        raise InputError(
            f"{option} {text!r}: expected from {MIN_GATE_TIME_S:g} s (the least in which a gate can reach its first "
            f"interval: {blocks.FIRST_LOOK_BLOCKS} blocks of fresh processes) to a day"
        )
    return seconds


def _plan(request: ABRequest, tree: Tree, repo: Any, option: str, imports: SideImports) -> list[tuple[Case, str | None]]:
    """A side's cases: the selection, with the configs and -w files as that side's tree has them, their user code
    imported as the side's worker imports it (session.side_imports: its tree first)."""
    from asyncbench.backends import get_backend
    from asyncbench.engine import expansion

    selection = request.selection
    configs = sides.configs_in(tree, repo, selection.configs, option)
    workloads = sides.workloads_in(tree, repo, selection.workloads, option)
    with imports.of(tree.root):
        plan = planning.plan(dataclasses.replace(selection, configs=configs, workloads=workloads))
        backends = {name: get_backend(name) for e in plan.experiments for name in e.backends}
        return list(expansion.plan(plan, backends))


def _facts(side: Any, backends: list[str], timeout_s: float) -> dict[str, Any]:
    """The side's environment as its worker captures it; what went wrong, if it could not."""
    from asyncbench.engine import isolation

    try:
        found = dict(side.call("environment", backends, timeout_s))
    except isolation.WorkerLost as lost:
        return {"unavailable": f"could not capture: {lost}"}
    tree = getattr(side, "tree", None)
    if tree:  # the revision the side imports, not the one the worker was started in (ab's working directory)
        found["git_sha"] = host_facts.git_sha(tree)
    return found


def _margin(base_case: Case, gate_margin: float) -> float:
    """A case's margin: its `ab_margin` setting as the base side's config states it (a pull request cannot loosen
    its own gate), else the gate's --max-regression."""
    own = base_case.settings.ab_margin
    return gate_margin if own is None else own


Planned = list[tuple[Case, str | None]]


def _unheeded_margins(base_cases: Planned, head_cases: Planned, gate_margin: float) -> list[str]:
    """A line per case whose head states another ab_margin than the base: the head's is not the one that judges it."""
    base = {case.id: case for case, _ in base_cases}
    lines = []
    for case, _ in head_cases:
        own, judging = case.settings.ab_margin, _margin(base[case.id], gate_margin) if case.id in base else None
        if own is not None and judging is not None and not math.isclose(own, judging):
            lines.append(
                f"{case.id}: head's config states ab_margin {units.percent(own)}; it is judged at {units.percent(judging)}, "
                "the base side's, until that change is merged (a pull request cannot loosen its own gate)"
            )
    return lines


def run(request: ABRequest, say: Say) -> ABSession:
    """Check the input, check out both sides, pair every case, save, judge (see the module's docstring)."""
    base_env, head_env = request.base_env, request.head_env
    sides.check_given(request.base, request.head, request.base_python)
    if request.base is None and request.head is None and request.base_python is None and not base_env and not head_env:
        raise InputError("ab needs a base: --base REV, --base-python PATH or --base-env KEY=VALUE (there is no default base)")
    selection = request.selection
    sides.check_configs(selection.configs)
    preflight.check_files(
        (("-o", request.json_path), ("--markdown", request.markdown_path), ("--bmf", request.bmf_path), ("--junit", request.junit_path)),
        [("CONFIG", c) for c in selection.configs],
    )
    base_python = request.base_python or sys.executable
    base_version = sides.probe_python(base_python) if request.base_python else platform.python_version()
    repo = sides.repository(selection.configs, selection.workloads) if request.base or request.head else None
    with contextlib.ExitStack() as stack:
        if repo is None:
            base_tree = head_tree = Tree(None, "working tree")
        else:
            sides.prune(repo, say)
            base_tree = stack.enter_context(sides.checkout(repo, request.base, "--base"))
            head_tree = stack.enter_context(sides.checkout(repo, request.head, "--head"))
        # the head first: planning imports each side's step files here too, each from its own tree; what the head
        # imported stays this process's (it reads the head's workloads for their metrics)
        imports = SideImports()
        head_cases = _plan(request, head_tree, repo, "--head", imports)
        base_cases = _plan(request, base_tree, repo, "--base", imports)
        sides.check_gpus([case for case, skip in (*head_cases, *base_cases) if skip is None])  # both sides at once on one GPU
        checks = sum(len(case.expect) for case, _ in head_cases)
        if checks:
            say(f"{checks} expect: check{'' if checks == 1 else 's'} not evaluated: checks are `run`'s; `ab` compares timings")
        for line in _unheeded_margins(base_cases, head_cases, request.max_regression):
            say(line)
        both_sides = (  # as the outputs show them; each side's process gets its real variables
            Side("base", base_tree.revision, base_python, base_version, shown(base_env)),
            Side("head", head_tree.revision, sys.executable, platform.python_version(), shown(head_env)),
        )
        pairs = Pairs(request, both_sides, (base_env, head_env), (base_tree, head_tree), base_cases, head_cases, say)
        saved: list[bool] = []

        def save(report: ABReport) -> None:
            saved.append(not request.json_path or outputs.write(request.json_path, dumps(report), say))

        report, stopped = spine.drive(pairs, save)
    return _conclude(report, request, saved[-1], stopped, say)


def _conclude(report: ABReport, request: ABRequest, saved: bool, stopped: int | None, say: Say) -> ABSession:
    """Judged once (verdicts.paired), the pull-request comment, BMF and JUnit files written, and the view to print."""
    outcome = verdicts.judge(report)
    if stopped is not None:  # not a gate's answer: the exit code is the signal's, and the reason says so
        outcome = Outcome(stopped, (f"interrupted (exit {stopped}): the gate did not finish; each row is what its blocks had measured",))
    written = [request.json_path] if request.json_path and saved else []
    if not saved and request.json_path:
        outcome = outcome.with_unsaved(request.json_path)
    view = views.build(report, outcome)
    for path, content in _files(request, report, view):
        if outputs.write(path, content(), say):
            written.append(path)
        else:
            outcome = outcome.with_unsaved(path)
            view = views.build(report, outcome)
    if written:
        say(f"written: {', '.join(written)}")
    return ABSession(view, stopped if stopped is not None else outcome.code)


def _files(request: ABRequest, report: ABReport, view: views.ABView) -> list[tuple[str, Callable[[], str]]]:
    """The files written after judging, each with its content made only when asked: the pull-request comment, the
    paired ratios as BMF and the verdicts as JUnit XML."""
    from asyncbench.report import bmf, junit

    given = (
        (request.markdown_path, lambda: views.markdown(view)),
        (request.bmf_path, lambda: bmf.ab_bmf(report)),
        (request.junit_path, lambda: junit.ab_junit(report)),
    )
    return [(path, content) for path, content in given if path]


class Pairs:
    """The place that pairs every case present on both sides, in side processes started alike (one per side,
    interpreter and variables), within the gate's time; what was decided (or looked at, when cut short) is its
    report. `variables`: each side's --base-env / --head-env as given (`sides` show them masked)."""

    def __init__(
        self,
        request: ABRequest,
        both: tuple[Side, Side],
        variables: tuple[Mapping[str, str], Mapping[str, str]],
        trees: tuple[Tree, Tree],
        base_cases: list[tuple[Case, str | None]],
        head_cases: list[tuple[Case, str | None]],
        say: Say | None = None,
    ):
        from asyncbench.workloads import plugins

        self.request, self.sides, self.variables, self.trees = request, both, variables, trees
        self.say = say
        self.base_by_id = {case.id: (case, skip) for case, skip in base_cases}
        self.head_cases = head_cases
        head_ids = {case.id for case, _ in head_cases}
        self.both = [(case, skip) for case, skip in head_cases if case.id in self.base_by_id]
        self.workloads = {case.workload: plugins.find(case.workload) for case, _ in self.both}
        self.runnable = [
            case
            for case, skip in self.both
            if skip is None and self.base_by_id[case.id][1] is None and not self.workloads[case.workload].across_processes
        ]
        # a case on one side only still says what it ran (its own side's case): recorded, it keeps its params
        self.finished = [PairedCase.of(c, "one-sided", "only on base") for i, (c, _) in self.base_by_id.items() if i not in head_ids]
        self.finished += [PairedCase.of(c, "one-sided", "only on head") for c, _ in head_cases if c.id not in self.base_by_id]
        self.pairings: list[Any] = []
        self.started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self._workers: dict[tuple[str, str, tuple[tuple[str, str], ...]], Any] = {}
        self._seats: dict[str, Any] = {}  # each side's one running process (side_process.SideWorker.seats)
        self._given = {side.name: side_variables for side, side_variables in zip(both, variables, strict=True)}

    def _worker(self, side: Side, tree: Tree, case: Case) -> Any:
        from asyncbench.backends import get_backend
        from asyncbench.engine import case_workers, side_process

        backend = get_backend(case.backend)
        python = side.python if side.python != sys.executable else (backend.interpreter() or side.python)
        # as `run`'s workers: a CPU case's worker keeps its framework off the GPUs (JAX_PLATFORMS=cpu for JAX)
        environment = {**case_workers.environment_for(backend, case_workers.uses_gpu(case)), **self._given[side.name]}
        key = (side.name, python, tuple(sorted(environment.items())))
        if key not in self._workers:
            root = str(tree.root) if tree.root else None
            self._workers[key] = side_process.SideWorker(side.name, root, python, environment, seats=self._seats)
        return self._workers[key]

    def execute(self) -> None:
        try:
            self._pair()
        except KeyboardInterrupt:  # every case that measured a block keeps it: a look at what it has (marked interrupted)
            self.finished += [p.finish() for p in self.pairings if p.done is not None or p.n_blocks]
            raise
        finally:
            for side_worker in self._workers.values():
                side_worker.close()

    def _pair(self) -> None:
        from rich.console import Console

        from asyncbench.engine import gate_time, paired
        from asyncbench.report.progress import ProgressDisplay

        request, both_sides, trees = self.request, self.sides, self.trees
        stderr = Console(stderr=True)
        display = ProgressDisplay(enabled=request.progress, console=stderr, verbose=request.verbose)
        case_error = request.family_error / max(len(self.runnable), 1)
        if self.runnable:  # what each side runs on, as its own worker sees it (another Python has other versions)
            first = self.runnable[0]
            used = list(dict.fromkeys(c.backend for c in self.runnable))
            base_facts, head_facts = (
                _facts(self._worker(side, tree, first), used, first.settings.timeout_s)
                for side, tree in zip(both_sides, trees, strict=True)
            )
            self.sides = (dataclasses.replace(both_sides[0], facts=base_facts), dataclasses.replace(both_sides[1], facts=head_facts))
        for case, skip in self.both:
            base_case, base_skip = self.base_by_id[case.id]
            if skip or base_skip:
                self.finished.append(PairedCase(case.id, "skipped", skip or base_skip))
            elif self.workloads[case.workload].across_processes:
                self.finished.append(PairedCase(case.id, "skipped", "measures itself across processes (torchrun ranks): not paired"))
            else:
                pair = (self._worker(self.sides[0], trees[0], base_case), self._worker(self.sides[1], trees[1], case))
                workload = self.workloads[case.workload]
                margin = _margin(base_case, request.max_regression)
                pairing = paired.Pairing(base_case, case, pair, workload, case_error, margin, display.update, syncs=request.syncs)
                self.pairings.append(pairing)
        block_progress.report_blocks(self.pairings, display, scrubber(*self.variables))
        started = time.perf_counter()
        with display:
            self.finished += gate_time.gate(
                self.pairings,
                request.gate_time_s,
                lambda i, p: display.start_block(i, len(self.pairings), p.head_case),
                cap_s=request.gate_cap_s,
            )
        if self.say is not None:
            taken_s = time.perf_counter() - started
            for line in gate_time.time_notes(self.pairings, taken_s, request.gate_time_s, request.gate_cap_s):
                self.say(line)

    def collect(self, interrupted: bool) -> ABReport:
        order = {case.id: index for index, (case, _) in enumerate(self.head_cases)}
        finished = sorted(self.finished, key=lambda case: order.get(case.id, len(order)))  # the plan's order
        scrub = scrubber(*self.variables)
        request = self.request
        return ABReport(
            created=self.started,
            tool_version=__version__,
            base=self.sides[0],
            head=self.sides[1],
            max_regression=request.max_regression,
            family_error=request.family_error,
            allow_inconclusive=request.allow_inconclusive,
            idle_side=IDLE_SIDE,
            cases=tuple(dataclasses.replace(case, reason=scrub(case.reason)) for case in finished),
            interrupted=interrupted,
        )
