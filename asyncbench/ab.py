"""`asyncbench ab`: the same selection as `run`, measured on two sides in one run, paired round by round.

load → run → save → render, as `run`: each side's source tree is checked
out (a temporary git worktree of --base / --head, removed afterwards; the
head defaults to the working tree), each side reads the config and every
file it names from its own tree, and its worker imports that tree first.
--base-python runs the base side under another environment, --base-env /
--head-env set variables on one side (shown with the values of secret-looking
names masked). Everything wrong with the input, output paths included, is
one line and exit 2 before anything runs; a worktree an earlier `ab` killed
outright left behind is removed first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import platform
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from asyncbench import session
from asyncbench.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, InputError
from asyncbench.host import facts as host_facts
from asyncbench.host import worktrees
from asyncbench.report import paired as views
from asyncbench.results import blocks, budget, outputs
from asyncbench.results.model import Case
from asyncbench.results.paired import ABReport, PairedCase, Side, dumps
from asyncbench.side_variables import is_secret, parse_env, scrubber, shown, shown_value  # noqa: F401 - ab's own API
from asyncbench.verdicts import compare
from asyncbench.verdicts import paired as verdicts
from asyncbench.version import __version__

Say = Callable[[str], None]
IDLE_SIDE = "frozen with SIGSTOP between its samples (no spinning thread pool, GC or engine thread competes); user thread settings kept"
# How long a side's interpreter check may take before it counts as not answering.
PROBE_TIMEOUT_S = 60.0
# Two minutes: what a pull request's check can wait for. A millisecond numpy or torch case decides a 1% margin in
# 5–30 s of it; the textbook's slow cases (conversion's print, training_memory) cannot resolve 2% in it and say what
# they resolved instead.
DEFAULT_GATE_TIME_S = 120.0


@dataclass(frozen=True)
class ABRequest:
    """What `asyncbench ab` was asked: the selection as `run` takes it (its configs, -w, -b, -d, --set, --quick),
    and the two sides."""

    selection: session.RunRequest = session.RunRequest()
    base: str | None = None
    head: str | None = None
    base_python: str | None = None
    base_env: tuple[str, ...] = ()
    head_env: tuple[str, ...] = ()
    max_regression: str = "5%"
    allow_inconclusive: bool = False
    family_error: float = budget.FAMILY_ERROR
    #: the gate's whole measuring time, given to its cases by how far each is from a decision (engine.gate_time)
    gate_time: str = f"{DEFAULT_GATE_TIME_S:g}s"
    json_path: str | None = None
    markdown_path: str | None = None
    progress: bool = True


@dataclass(frozen=True)
class ABSession:
    view: views.ABView
    code: int


@dataclass(frozen=True)
class _Tree:
    """A side's source: the directory to read configs from and to import first (None: no repository involved)."""

    root: Path | None
    revision: str


# The units a --gate-time may carry, in seconds.
GATE_TIME_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0}
# Below this a gate cannot reach the first look of even the fastest case: FIRST_LOOK_BLOCKS (10) blocks, each a fresh
# pair of processes sampled at least BLOCK_MIN_S (0.5 s), is 5 s of sampling alone; with the pairs' starts a 1 ms
# numpy case took 9.1 s to its first look (11 blocks) beside a CPU hog on the 2-core runner.
MIN_GATE_TIME_S = 10.0


def parse_gate_time(text: str) -> float:
    """'120', '90s', '2m' → seconds; InputError for anything else, or under MIN_GATE_TIME_S."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*(s|m|min)?\s*", str(text))
    if match is None:
        raise InputError(f"--gate-time {text!r}: expected a duration such as 120, 90s or 2m")
    seconds = float(match.group(1)) * GATE_TIME_UNITS[match.group(2) or ""]
    if not MIN_GATE_TIME_S <= seconds <= 86400:
        raise InputError(
            f"--gate-time {text!r}: expected from {MIN_GATE_TIME_S:g} s (the least in which a gate can reach its first "
            f"interval: {blocks.FIRST_LOOK_BLOCKS} blocks of fresh processes) to a day"
        )
    return seconds


def _check_given(request: ABRequest) -> None:
    """InputError for an option given empty: `--base ""` (an unset CI variable, `--base "$BASE"`) is a mistake, not
    "no base": taken as absent it would compare the working tree with itself and pass."""
    revision = "a git revision (a branch, tag or commit)"
    wanted = {"--base": revision, "--head": revision, "--base-python": "the path of a Python interpreter"}
    for option, value in (("--base", request.base), ("--head", request.head), ("--base-python", request.base_python)):
        if value is not None and not value.strip():
            raise InputError(f"{option} is empty: give {wanted[option]}")


def _check_configs(configs: tuple[str, ...]) -> None:
    """Every config is a file here, said before anything else is asked of it (its repository, its revisions): a
    typo in its name must be named, not reported as a folder outside git."""
    for config in configs:
        path = Path(config)
        if not path.exists():
            raise InputError("no such file", location=config)
        if not path.is_file():
            raise InputError("is a directory, not a config file" if path.is_dir() else "is not a regular file", location=config)


def _repository(request: ABRequest) -> Path:
    """The repository that holds the first config (with -w alone: the first -w file's, else the current directory's)."""
    files = [Path(where) for where in map(_workload_file, request.selection.workloads) if where is not None]
    first = Path(request.selection.configs[0]) if request.selection.configs else (files[0] if files else None)
    where = first.resolve().parent if first is not None and first.exists() else Path.cwd()
    try:
        return Path(worktrees.git(where, "rev-parse", "--show-toplevel"))
    except subprocess.CalledProcessError:
        holder = "config's" if request.selection.configs else "-w file's" if files else "working directory's"
        raise InputError(f"{where} is not in a git repository: --base and --head name revisions of the {holder} repository") from None


def _commit(repo: Path, revision: str, option: str) -> str:
    try:
        return worktrees.git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    except subprocess.CalledProcessError:
        raise InputError(f"{option} {revision!r}: no such revision in {repo}") from None


@contextlib.contextmanager
def _checkout(repo: Path, revision: str | None, option: str) -> Iterator[_Tree]:
    """A revision as a temporary worktree, removed afterwards (None: the working tree itself)."""
    if revision is None:
        yield _Tree(repo, "working tree")
        return
    sha = _commit(repo, revision, option)
    with contextlib.ExitStack() as stack:
        try:
            place = stack.enter_context(worktrees.checkout(repo, sha, option.strip("-")))
        except subprocess.CalledProcessError as exc:
            raise InputError(f"{option} {revision!r}: cannot check it out: {exc.stderr.strip()}") from None
        yield _Tree(place, f"{sha[:10]} ({revision})")


def _prune(repo: Path, say: Say) -> None:
    """Remove the worktrees an earlier `ab` killed outright left in this repository (their owner is gone)."""
    for left in worktrees.prune_stale(repo):
        say(f"removed {left.path}: a worktree left by asyncbench process {left.pid}, which ended without removing it")


def _configs_in(tree: _Tree, repo: Path | None, configs: tuple[str, ...], option: str) -> tuple[str, ...]:
    """The configs as this side's tree has them: the same path relative to the repository."""
    if repo is None or tree.root is None:
        return configs
    mapped = []
    for config in configs:
        relative = Path(config).resolve().relative_to(repo)
        there = tree.root / relative
        if not there.is_file():
            raise InputError(f"{relative} does not exist in {option.strip('-')} ({tree.revision})")
        mapped.append(str(there))
    return tuple(mapped)


def _workload_file(name: str) -> str | None:
    """The file part of a -w name that names a file (`path/to/file.py:Name`, as plugins.canonical reads it), else
    None: a built-in, module (`pkg.mod:Name`) or plugin name."""
    from asyncbench.workloads import plugins

    where, colon, _ = name.rpartition(":")
    if not (colon and where and plugins.is_reference(name)):
        return None
    return where if where.endswith(".py") or "/" in where or "\\" in where else None


def _workloads_in(tree: _Tree, repo: Path | None, workloads: tuple[str, ...], option: str) -> tuple[str, ...]:
    """The -w names as this side's tree has them: a file (relative to the working directory) becomes the same path
    relative to the repository in that tree, so each side imports its own revision of it, as it reads its own
    configs (_configs_in). Built-in, module and plugin names are left as given: a module comes from the side's
    tree, which its worker puts first on sys.path. InputError, one line, for a file outside the repository (no
    revision has a copy of it: both sides would run the same code) or missing in this side's revision."""
    if repo is None or tree.root is None:
        return workloads
    mapped = []
    for name in workloads:
        where = _workload_file(name)
        path = (Path.cwd() / where).expanduser().resolve() if where is not None else None
        if path is None or not path.is_file():  # not a file, or none here: session.plan says what is wrong with it
            mapped.append(name)
            continue
        try:
            relative = path.relative_to(repo)
        except ValueError:
            raise InputError(
                f"-w {name}: {path} is outside the repository {repo}, so no revision has its own copy and both sides "
                "would run the same code; put the file in the repository"
            ) from None
        there = tree.root / relative
        if not there.is_file():
            raise InputError(
                f"-w {name}: {relative} does not exist in {option.strip('-')} ({tree.revision}); each side runs its own "
                "revision of the file, so it must be committed there"
            )
        mapped.append(f"{there}:{name.rpartition(':')[2]}")
    return tuple(mapped)


def _probe_python(python: str) -> str:
    """The interpreter's version, once it has shown it can import asyncbench's pairing worker; InputError if not."""
    probe = "import platform, asyncbench.engine.paired; print(platform.python_version())"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except OSError as exc:
        raise InputError(f"--base-python {python}: cannot run it: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"--base-python {python}: did not answer within {PROBE_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise InputError(
            f"--base-python {python}: it cannot import asyncbench's pairing worker ({last}): install this asyncbench there "
            "(pip install -e <this checkout>)"
        )
    return done.stdout.strip()


def _plan(request: ABRequest, tree: _Tree, repo: Path | None, option: str) -> list[tuple[Case, str | None]]:
    """A side's cases: the selection, with the configs and -w files as that side's tree has them."""
    from asyncbench.backends import get_backend
    from asyncbench.engine import runner

    selection = request.selection
    configs = _configs_in(tree, repo, selection.configs, option)
    workloads = _workloads_in(tree, repo, selection.workloads, option)
    plan = session.plan(dataclasses.replace(selection, configs=configs, workloads=workloads))
    backends = {name: get_backend(name) for e in plan.experiments for name in e.backends}
    return list(runner.plan(plan, backends))


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


def run(request: ABRequest, say: Say) -> ABSession:
    """Check the input, check out both sides, pair every case, save, judge (see the module's docstring)."""
    margin = compare.parse_threshold(request.max_regression)
    gate_time_s = parse_gate_time(request.gate_time)
    base_env, head_env = parse_env(request.base_env, "--base-env"), parse_env(request.head_env, "--head-env")
    _check_given(request)
    if request.base is None and request.head is None and request.base_python is None and not base_env and not head_env:
        raise InputError("ab needs a base: --base REV, --base-python PATH or --base-env KEY=VALUE (there is no default base)")
    _check_configs(request.selection.configs)
    configs = [("CONFIG", config) for config in request.selection.configs]
    outputs.check((("-o", request.json_path), ("--markdown", request.markdown_path)), inputs=configs)
    base_python = request.base_python or sys.executable
    base_version = _probe_python(base_python) if request.base_python else platform.python_version()
    repo = _repository(request) if request.base or request.head else None
    with contextlib.ExitStack() as stack:
        if repo is None:
            base_tree = head_tree = _Tree(None, "working tree")
        else:
            _prune(repo, say)
            base_tree = stack.enter_context(_checkout(repo, request.base, "--base"))
            head_tree = stack.enter_context(_checkout(repo, request.head, "--head"))
        # the head first: planning imports each side's -w file here too, and a neighbour it imports is cached by
        # name, so the parent (which reads the head's workload for its metrics) keeps the head's
        head_cases = _plan(request, head_tree, repo, "--head")
        base_cases = _plan(request, base_tree, repo, "--base")
        checks = sum(len(case.expect) for case, _ in head_cases)
        if checks:
            say(f"{checks} expect: check{'' if checks == 1 else 's'} not evaluated: checks are `run`'s; `ab` compares timings")
        sides = (  # as the outputs show them; each side's process gets its real variables
            Side("base", base_tree.revision, base_python, base_version, shown(base_env)),
            Side("head", head_tree.revision, sys.executable, platform.python_version(), shown(head_env)),
        )
        report, stopped = _execute(
            request, margin, gate_time_s, sides, (base_env, head_env), (base_tree, head_tree), base_cases, head_cases
        )
    outcome = verdicts.judge(report)
    written = []
    if request.json_path:
        if outputs.write(request.json_path, dumps(report), say):
            written.append(request.json_path)
        else:
            outcome = outcome.with_unsaved(request.json_path)
    view = views.build(report, outcome)
    if request.markdown_path:
        if outputs.write(request.markdown_path, views.markdown(view), say):
            written.append(request.markdown_path)
        else:
            outcome = outcome.with_unsaved(request.markdown_path)
            view = views.build(report, outcome)
    if written:
        say(f"written: {', '.join(written)}")
    return ABSession(view, stopped if stopped is not None else outcome.code)


def _execute(
    request: ABRequest,
    margin: float,
    gate_time_s: float,
    sides: tuple[Side, Side],
    variables: tuple[Mapping[str, str], Mapping[str, str]],
    trees: tuple[_Tree, _Tree],
    base_cases: list[tuple[Case, str | None]],
    head_cases: list[tuple[Case, str | None]],
) -> tuple[ABReport, int | None]:
    """Pair every case present on both sides; on Ctrl-C or SIGTERM keep what finished, marked interrupted.
    `variables`: each side's --base-env / --head-env as given (`sides` show them masked)."""
    from rich.console import Console

    from asyncbench.backends import get_backend
    from asyncbench.engine import gate_time, paired, side_process
    from asyncbench.report.progress import ProgressDisplay
    from asyncbench.workloads import plugins

    base_by_id = {case.id: (case, skip) for case, skip in base_cases}
    head_ids = {case.id for case, _ in head_cases}
    both = [(case, skip) for case, skip in head_cases if case.id in base_by_id]
    workloads = {case.workload: plugins.find(case.workload) for case, _ in both}
    runnable = [
        case for case, skip in both if skip is None and base_by_id[case.id][1] is None and not workloads[case.workload].across_processes
    ]
    case_error = request.family_error / max(len(runnable), 1)
    finished: list[PairedCase] = [PairedCase(i, "one-sided", "only on base") for i in base_by_id if i not in head_ids]
    finished += [PairedCase(c.id, "one-sided", "only on head") for c, _ in head_cases if c.id not in base_by_id]
    workers: dict[tuple[str, str, tuple[tuple[str, str], ...]], side_process.SideWorker] = {}

    given = {side.name: side_variables for side, side_variables in zip(sides, variables, strict=True)}

    def worker(side: Side, tree: _Tree, backend_name: str) -> side_process.SideWorker:
        backend = get_backend(backend_name)
        python = side.python if side.python != sys.executable else (backend.interpreter() or side.python)
        environment = {**backend.worker_environment(), **given[side.name]}
        key = (side.name, python, tuple(sorted(environment.items())))
        if key not in workers:
            workers[key] = side_process.SideWorker(side.name, str(tree.root) if tree.root else None, python, environment)
        return workers[key]

    stderr = Console(stderr=True)
    display = ProgressDisplay(enabled=request.progress and stderr.is_terminal, console=stderr)
    previous = signal.signal(signal.SIGTERM, session.raise_terminated)
    stopped = None
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    pairings: list[paired.Pairing] = []
    try:
        if runnable:  # what each side runs on, as its own worker sees it (another Python has other versions)
            first = runnable[0]
            used = list(dict.fromkeys(c.backend for c in runnable))
            base_facts, head_facts = (
                _facts(worker(side, tree, first.backend), used, first.settings.timeout_s) for side, tree in zip(sides, trees, strict=True)
            )
            sides = (dataclasses.replace(sides[0], facts=base_facts), dataclasses.replace(sides[1], facts=head_facts))
        for case, skip in both:
            base_case, base_skip = base_by_id[case.id]
            if skip or base_skip:
                finished.append(PairedCase(case.id, "skipped", skip or base_skip))
            elif workloads[case.workload].across_processes:
                finished.append(PairedCase(case.id, "skipped", "measures itself across processes (torchrun ranks): not paired"))
            else:
                pair = (worker(sides[0], trees[0], base_case.backend), worker(sides[1], trees[1], case.backend))
                pairings.append(paired.Pairing(base_case, case, pair, workloads[case.workload], case_error, margin, display.update))
        with display:
            finished += gate_time.gate(pairings, gate_time_s, lambda i, p: display.start(i, len(pairings), p.head_case))
    except KeyboardInterrupt as stop:
        stopped = EXIT_TERMINATED if isinstance(stop, session.Terminated) else EXIT_INTERRUPTED
        finished += [p.finish() for p in pairings if p.done is not None or p.judged]  # what was decided or looked at
    finally:
        signal.signal(signal.SIGTERM, previous)
        for side_worker in workers.values():
            side_worker.close()
    order = {case.id: index for index, (case, _) in enumerate(head_cases)}
    finished.sort(key=lambda case: order.get(case.id, len(order)))  # the plan's order, whenever each was decided
    scrub = scrubber(*variables)
    finished = [dataclasses.replace(case, reason=scrub(case.reason)) for case in finished]
    report = ABReport(
        created=started,
        tool_version=__version__,
        base=sides[0],
        head=sides[1],
        max_regression=margin,
        family_error=request.family_error,
        allow_inconclusive=request.allow_inconclusive,
        idle_side=IDLE_SIDE,
        cases=tuple(finished),
        interrupted=stopped is not None,
    )
    return report, stopped
