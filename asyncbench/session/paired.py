"""`asyncbench ab`: the same selection as `run`, measured on two sides in one run, paired round by round.

A place on the spine as `run`'s are (session.spine): the place (`Pairs`)
checks everything wrong with the input, output paths included, in one line
and exit 2 before anything runs; then each side's source tree is checked
out (session.sides: a temporary git worktree of --base / --head, removed
once the work ends; the head defaults to the working tree), each side reads
the config and every file it names from its own tree, and its worker
imports that tree first. --base-python runs the base side under another
environment, --base-env / --head-env set variables on one side (shown with
the values of secret-looking names masked: session.side_variables). The
place pairs every case present on both sides in the gate's side workers
(engine.side_process.SideWorkers); Ctrl-C or SIGTERM keep what was decided,
saved as `run` saves (a second SIGTERM ignored meanwhile). Its report
concludes as `PairedConclusion` says: judged once (verdicts.paired), the
pull-request comment, BMF and JUnit files written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import math
import os
import platform
import re
import sys
import time
from typing import Any, Callable, Sequence

from asyncbench.errors import InputError, InputErrors, each_error
from asyncbench.host import facts as host_facts
from asyncbench.report import paired as views
from asyncbench.results.ab_report import ABReport
from asyncbench.results.model import Case
from asyncbench.results.paired import PairedCase, Side
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.session import block_progress, planning, preflight, sides, spine
from asyncbench.session.requests import ABRequest
from asyncbench.session.saver import Saver
from asyncbench.session.side_imports import SideImports
from asyncbench.session.side_variables import scrubber, shown
from asyncbench.session.sides import Tree
from asyncbench.verdicts import paired as verdicts
from asyncbench.verdicts.outcome import Outcome
from asyncbench.version import __version__

IDLE_SIDE = "frozen with SIGSTOP between its samples (no spinning thread pool, GC or engine thread competes); user thread settings kept"
#: the files `ab` writes after judging (Outputs.files' names), in the order it writes them: the pull-request comment,
#: the paired ratios as BMF, the verdicts as JUnit XML
AB_FILES = ("markdown", "bmf", "junit")

Planned = list[tuple[Case, str | None]]


def _plan(request: ABRequest, tree: Tree, repo: Any, option: str, imports: SideImports) -> Planned:
    """A side's cases: the selection, with the configs and -w files as that side's tree has them, their user code
    imported as the side's worker imports it (session.side_imports: its tree first)."""
    from asyncbench.backends import get_backend
    from asyncbench.engine import expansion

    selection = request.selection
    configs = sides.configs_in(tree, repo, selection.configs, option)
    workloads = sides.workloads_in(tree, repo, selection.workloads, option)
    try:
        with imports.of(tree.root):
            plan = planning.plan(dataclasses.replace(selection, configs=configs, workloads=workloads))
            backends = {name: get_backend(name) for e in plan.experiments for name in e.backends}
            return list(expansion.expand(plan, backends))
    except InputError as error:
        if tree.root is None:  # no checkout: the user's own tree, as `run` would import it
            raise
        raise InputErrors([_of_side(one, tree, option) for one in each_error(error)]) from error


def _refuse_choice(request: ABRequest, head_refused: InputErrors, base_tree: Tree, repo: Any, imports: SideImports) -> None:
    """The head refused by -b/-d alone (each of its errors overrides.NothingToRun): when the base refuses it too,
    the choice is the command line's, no side's, and is said so (InputError, the head's reasons without its side);
    otherwise the head's own tree is the cause and its error stands (the caller raises it). The trial read `the
    head side (working tree): nothing to run … cupy runs on cuda only` for `-b cupy`, which neither side can run."""
    from asyncbench.spec.overrides import NothingToRun

    selection = request.selection
    cause = head_refused.__cause__
    if not (selection.backends or selection.devices) or not isinstance(cause, InputError):
        return
    if not all(isinstance(one, NothingToRun) for one in each_error(cause)):
        return
    try:
        _plan(request, base_tree, repo, "--base", imports)
    except InputErrors as base_refused:
        if isinstance(base_refused.__cause__, InputError) and all(
            isinstance(one, NothingToRun) for one in each_error(base_refused.__cause__)
        ):
            choice = " ".join([*(f"-b {b}" for b in selection.backends), *(f"-d {d}" for d in selection.devices)])
            raise InputErrors([InputError(one.message, location=choice) for one in each_error(cause)]) from None


def _of_side(error: InputError, tree: Tree, option: str) -> InputError:
    """A checked-out side's config or import failure as the user reads it: the side and its revision named, its
    paths as the repository names them (not the temporary checkout's), and a package its step files import and
    that revision lacks said as such. `run`'s advice to `pip install -e .` is wrong here: each side imports its
    own tree first, and the trial's base branch had deleted the package."""
    from asyncbench.workloads import plugins

    root = f"{tree.root}{os.sep}"

    def relative(text: str) -> str:
        return text.replace(root, "")

    message = relative(error.message)
    for missing in re.finditer(re.escape(plugins.INSTALL_ADVICE).replace(r"\{top\}", r"(?P<top>[^']+)"), message):
        message = message.replace(missing.group(0), f": that revision's tree has no package {missing.group('top')}")
    where = f"the {option.lstrip('-')} side ({tree.revision})"
    location = f"{where}: {relative(error.location)}" if error.location else where
    return InputError(message, location=location, path=error.path)


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


def _head_margins(base_cases: Planned, head_cases: Planned, gate_margin: float) -> dict[str, float]:
    """Each case whose head states another ab_margin than the one that judges it (the base's, else the gate's): the
    head's, kept in the report beside the case's `margin` (PairedCase.head_margin) and said under the table."""
    base = {case.id: case for case, _ in base_cases}
    unheeded = {}
    for case, _ in head_cases:
        own, judging = case.settings.ab_margin, _margin(base[case.id], gate_margin) if case.id in base else None
        if own is not None and judging is not None and not math.isclose(own, judging):
            unheeded[case.id] = own
    return unheeded


def run(request: ABRequest, say: Say) -> spine.Ended[views.ABView]:
    """Check the input, check out both sides, pair every case, save, judge (see the module's docstring)."""
    return spine.run(Pairs(request, say), say)


class PairedConclusion:
    """How `ab`'s report concludes: judged once (verdicts.paired; cut short, the outcome is the signal's), the
    pull-request comment, BMF and JUnit files written (a write that fails is one line and exit 3); nothing recorded
    (`asyncbench record AB.json` does)."""

    def __init__(self, request: ABRequest):
        self.request = request

    @property
    def dumps(self) -> Callable[[ABReport], str]:
        return ABReport.to_json

    def judge(self, report: ABReport, unsaved: Sequence[str], stopped: int | None) -> tuple[views.ABView, Outcome]:
        outcome = verdicts.judge(report)
        if stopped is not None:  # not a gate's answer: the exit code is the signal's, and the reason says so
            said = f"interrupted (exit {stopped}): the gate did not finish; each row is what its blocks had measured"
            outcome = Outcome(stopped, (said,))
        for path in unsaved:
            outcome = outcome.with_unsaved(path)
        return views.build(report, outcome), outcome

    def files(self, report: ABReport, view: views.ABView) -> list[tuple[str, Callable[[], str]]]:
        from asyncbench.report import bmf, junit

        made: dict[str, Callable[[], str]] = {
            "markdown": lambda: views.markdown(view),
            "bmf": lambda: bmf.ab_bmf(report),
            "junit": lambda: junit.ab_junit(report),
        }
        given = self.request.outputs.files
        return [(given[name], made[name]) for name in AB_FILES if given.get(name)]

    def unwritten(self, path: str, exc: OSError) -> str:
        return f"asyncbench: error: cannot write {path}: {exc.strerror or exc}"

    def record(self, recorded: Sequence[tuple[Report, str | None]], verdict: Outcome, say: Say) -> Outcome:
        return verdict

    def with_outcome(self, report: ABReport, view: views.ABView, verdict: Outcome) -> views.ABView:
        return views.build(report, verdict)


class Pairs:
    """The place that pairs every case present on both sides, in side processes started alike (one per side,
    interpreter and variables: engine.side_process.SideWorkers), within the gate's time; what was decided (or
    looked at, when cut short) is its report. The sides show their variables masked (`shown`)."""

    def __init__(self, request: ABRequest, say: Say):
        self.request, self.say = request, say
        self.pairings: list[Any] = []
        self.time_notes: tuple[str, ...] = ()  # what the gate said of its time (gate_time.time_notes), once it ran
        self.finished: list[PairedCase] = []
        self.head_margins: dict[str, float] = {}  # the ab_margin head states where another judges it (_head_margins)
        self.variables = (request.base_env, request.head_env)  # each side's, as given: its process gets them

    def preflight(self) -> PairedConclusion:
        from asyncbench.spec import overrides

        request = self.request
        sides.check_given(request.base, request.head, request.base_python)
        if request.base is None and request.head is None and request.base_python is None and not any(self.variables):
            raise InputError("ab needs a base: --base REV, --base-python PATH or --base-env KEY=VALUE (there is no default base)")
        selection, outputs = request.selection, request.outputs
        sides.check_configs(selection.configs)
        overrides.check_sets(selection.sets)  # the command line's fault, not a side's: --set sets both sides
        sides.check_workload_files(selection.workloads)  # likewise: a -w file is named from here, for both sides
        preflight.check_files(
            (("-o", outputs.json_path), *((f"--{name}", outputs.files.get(name)) for name in AB_FILES)),
            [("CONFIG", c) for c in selection.configs],
        )
        self.base_python = request.base_python or sys.executable
        self.base_version = sides.probe_python(self.base_python) if request.base_python else platform.python_version()
        self.repo = sides.repository(selection.configs, selection.workloads) if request.base or request.head else None
        return PairedConclusion(request)

    def start(self, saver: Saver, stack: contextlib.ExitStack[Any]) -> None:
        """Both sides checked out (removed once the work ends) and planned, each case on both sides to pair."""
        from asyncbench.engine import side_process
        from asyncbench.workloads import plugins

        request, repo, say = self.request, self.repo, self.say
        if repo is None:
            base_tree = head_tree = Tree(None, "working tree")
        else:
            sides.prune(repo, say)
            base_tree = stack.enter_context(sides.checkout(repo, request.base, "--base"))
            head_tree = stack.enter_context(sides.checkout(repo, request.head, "--head"))
        # the head first: planning imports each side's step files here too, each from its own tree; what the head
        # imported stays this process's (it reads the head's workloads for their metrics)
        imports = SideImports()
        try:
            head_cases = _plan(request, head_tree, repo, "--head", imports)
        except InputErrors as refused:
            _refuse_choice(request, refused, base_tree, repo, imports)
            raise
        base_cases = _plan(request, base_tree, repo, "--base", imports)
        sides.check_gpus([case for case, skip in (*head_cases, *base_cases) if skip is None])  # both sides at once on one GPU
        checks = sum(len(case.expect) for case, _ in head_cases)
        if checks:
            say(f"{checks} expect: check{'' if checks == 1 else 's'} not evaluated: checks are `run`'s; `ab` compares timings")
        # kept in the file and said once, under the table (stdout, `show`, the pull-request comment), as time_notes are
        self.head_margins = _head_margins(base_cases, head_cases, request.gate.max_regression)
        self.trees = (base_tree, head_tree)
        self.sides = (  # as the outputs show them; each side's process gets its real variables
            Side("base", base_tree.revision, self.base_python, self.base_version, shown(request.base_env)),
            Side("head", head_tree.revision, sys.executable, platform.python_version(), shown(request.head_env)),
        )
        self.workers = side_process.SideWorkers(
            {
                side.name: (str(tree.root) if tree.root else None, side.python, variables)
                for side, tree, variables in zip(self.sides, self.trees, self.variables, strict=True)
            }
        )
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
        self.started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")

    def execute(self) -> None:
        try:
            self._pair()
        except KeyboardInterrupt:  # every case that measured a block keeps it: a look at what it has (marked interrupted)
            self.finished += [p.finish() for p in self.pairings if p.done is not None or p.n_blocks]
            raise
        finally:
            self.workers.close()

    def _pair(self) -> None:
        from rich.console import Console

        from asyncbench.engine import gate_time, paired
        from asyncbench.report.progress import ProgressDisplay

        request, both_sides, workers = self.request, self.sides, self.workers
        stderr = Console(stderr=True)
        display = ProgressDisplay(enabled=request.progress, console=stderr, verbose=request.verbose)
        case_error = request.family_error / max(len(self.runnable), 1)
        if self.runnable:  # what each side runs on, as its own worker sees it (another Python has other versions)
            first = self.runnable[0]
            used = list(dict.fromkeys(c.backend for c in self.runnable))
            base_facts, head_facts = (_facts(workers.for_case(side.name, first), used, first.settings.timeout_s) for side in both_sides)
            self.sides = (dataclasses.replace(both_sides[0], facts=base_facts), dataclasses.replace(both_sides[1], facts=head_facts))
        for case, skip in self.both:
            base_case, base_skip = self.base_by_id[case.id]
            if skip or base_skip:
                self.finished.append(PairedCase(case.id, "skipped", skip or base_skip))
            elif self.workloads[case.workload].across_processes:
                self.finished.append(PairedCase(case.id, "skipped", "measures itself across processes (torchrun ranks): not paired"))
            else:
                pair = (workers.for_case("base", base_case), workers.for_case("head", case))
                workload = self.workloads[case.workload]
                margin = _margin(base_case, request.gate.max_regression)
                pairing = paired.Pairing(
                    base_case, case, pair, workload, case_error, margin, display.update, syncs=request.syncs, bound=request.bound
                )
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
        taken_s = time.perf_counter() - started - sum(p.aside_s for p in self.pairings)  # `ab --bound`'s rounds: not the gate's time
        # kept in the file and said once, under the table (stdout, `show`, the pull-request comment), not here too
        self.time_notes = tuple(gate_time.time_notes(self.pairings, taken_s, request.gate_time_s, request.gate_cap_s))

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
            max_regression=request.gate.max_regression,
            family_error=request.family_error,
            allow_inconclusive=request.gate.allow_inconclusive,
            idle_side=IDLE_SIDE,
            cases=tuple(dataclasses.replace(case, reason=scrub(case.reason), head_margin=self._head_margin(case)) for case in finished),
            interrupted=interrupted,
            time_notes=tuple(scrub(note) or "" for note in self.time_notes),
        )

    def _head_margin(self, case: PairedCase) -> float | None:
        """The ab_margin head's config states for `case`, where another judged it: only beside a margin that judged."""
        return self.head_margins.get(case.id) if case.margin is not None else None

    def recorded(self, report: ABReport) -> list[tuple[Report, str | None]]:
        return []  # `ab` records nothing itself: `asyncbench record AB.json` does

    def stopped_line(self, report: ABReport, kept_in: str) -> None:
        return None  # the outcome says it was interrupted
