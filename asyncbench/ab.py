"""`asyncbench ab`: the same selection as `run`, measured on two sides in one run, paired round by round.

load → run → save → render, as `run`: each side's source tree is checked
out (a temporary git worktree of --base / --head, removed afterwards; the
head defaults to the working tree), each side reads the config and every
file it names from its own tree, and its worker imports that tree first.
--base-python runs the base side under another environment, --base-env /
--head-env set variables on one side. Everything wrong with the input is
one line and exit 2 before anything runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import platform
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from asyncbench import session
from asyncbench.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, InputError
from asyncbench.report import paired as views
from asyncbench.results import budget, schema
from asyncbench.results.model import Case
from asyncbench.results.paired import ABReport, PairedCase, Side, dumps
from asyncbench.verdicts import compare
from asyncbench.verdicts import paired as verdicts
from asyncbench.version import __version__

Say = Callable[[str], None]
IDLE_SIDE = "frozen with SIGSTOP between its samples (no spinning thread pool, GC or engine thread competes); user thread settings kept"
# How long `git` and a side's interpreter check may take before they count as not answering.
PROBE_TIMEOUT_S = 60.0


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


def parse_env(items: tuple[str, ...], option: str) -> dict[str, str]:
    """KEY=VALUE pairs; InputError for one without '=' or with an empty key."""
    found = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{option} {item!r}: expected KEY=VALUE, e.g. {option} OMP_NUM_THREADS=1")
        found[key.strip()] = value
    return found


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise InputError("git is not installed: --base and --head name git revisions") from None
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, args, done.stdout, done.stderr)
    return done.stdout.strip()


def _repository(request: ABRequest) -> Path:
    """The repository that holds the first config (with -w alone: the current directory's)."""
    where = Path(request.selection.configs[0]).resolve().parent if request.selection.configs else Path.cwd()
    try:
        return Path(_git(where, "rev-parse", "--show-toplevel"))
    except subprocess.CalledProcessError:
        raise InputError(f"{where} is not in a git repository: --base and --head name revisions of the config's repository") from None


def _commit(repo: Path, revision: str, option: str) -> str:
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    except subprocess.CalledProcessError:
        raise InputError(f"{option} {revision!r}: no such revision in {repo}") from None


@contextlib.contextmanager
def _checkout(repo: Path, revision: str | None, option: str) -> Iterator[_Tree]:
    """A revision as a temporary worktree, removed afterwards (None: the working tree itself)."""
    if revision is None:
        yield _Tree(repo, "working tree")
        return
    sha = _commit(repo, revision, option)
    place = Path(tempfile.mkdtemp(prefix=f"asyncbench-{option.strip('-')}-"))
    try:
        _git(repo, "worktree", "add", "--detach", "--force", str(place), sha)
    except subprocess.CalledProcessError as exc:
        raise InputError(f"{option} {revision!r}: cannot check it out: {exc.stderr.strip()}") from None
    try:
        yield _Tree(place, f"{sha[:10]} ({revision})")
    finally:
        with contextlib.suppress(subprocess.CalledProcessError, InputError):
            _git(repo, "worktree", "remove", "--force", str(place))


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


def _plan(request: ABRequest, configs: tuple[str, ...]) -> list[tuple[Case, str | None]]:
    """A side's cases: the selection, with the configs as that side's tree has them."""
    from asyncbench.backends import get_backend
    from asyncbench.engine import runner

    plan = session.plan(dataclasses.replace(request.selection, configs=configs))
    backends = {name: get_backend(name) for e in plan.experiments for name in e.backends}
    return list(runner.plan(plan, backends))


def _facts(side: Any, backends: list[str], timeout_s: float) -> dict[str, Any]:
    """The side's environment as its worker captures it; what went wrong, if it could not."""
    from asyncbench.engine import isolation

    try:
        return dict(side.call("environment", backends, timeout_s))
    except isolation.WorkerLost as lost:
        return {"unavailable": f"could not capture: {lost}"}


def run(request: ABRequest, say: Say) -> ABSession:
    """Check the input, check out both sides, pair every case, save, judge (see the module's docstring)."""
    margin = compare.parse_threshold(request.max_regression)
    base_env, head_env = parse_env(request.base_env, "--base-env"), parse_env(request.head_env, "--head-env")
    if request.base is None and request.head is None and request.base_python is None and not base_env and not head_env:
        raise InputError("ab needs a base: --base REV, --base-python PATH or --base-env KEY=VALUE (there is no default base)")
    if request.json_path:
        session.check_outputs(session.RunRequest(json_path=request.json_path), [])
    base_python = request.base_python or sys.executable
    base_version = _probe_python(base_python) if request.base_python else platform.python_version()
    repo = _repository(request) if request.base or request.head else None
    with contextlib.ExitStack() as stack:
        if repo is None:
            base_tree = head_tree = _Tree(None, "working tree")
        else:
            base_tree = stack.enter_context(_checkout(repo, request.base, "--base"))
            head_tree = stack.enter_context(_checkout(repo, request.head, "--head"))
        base_cases = _plan(request, _configs_in(base_tree, repo, request.selection.configs, "--base"))
        head_cases = _plan(request, _configs_in(head_tree, repo, request.selection.configs, "--head"))
        sides = (
            Side("base", base_tree.revision, base_python, base_version, base_env),
            Side("head", head_tree.revision, sys.executable, platform.python_version(), head_env),
        )
        report, stopped = _execute(request, margin, sides, (base_tree, head_tree), base_cases, head_cases)
    outcome = verdicts.judge(report)
    view = views.build(report, outcome)
    written = []
    if request.json_path:
        schema.atomic_write(request.json_path, dumps(report))
        written.append(request.json_path)
    if request.markdown_path:
        schema.atomic_write(request.markdown_path, views.markdown(view))
        written.append(request.markdown_path)
    if written:
        say(f"written: {', '.join(written)}")
    return ABSession(view, stopped if stopped is not None else outcome.code)


def _execute(
    request: ABRequest,
    margin: float,
    sides: tuple[Side, Side],
    trees: tuple[_Tree, _Tree],
    base_cases: list[tuple[Case, str | None]],
    head_cases: list[tuple[Case, str | None]],
) -> tuple[ABReport, int | None]:
    """Pair every case present on both sides; on Ctrl-C or SIGTERM keep what finished, marked interrupted."""
    from rich.console import Console

    from asyncbench.backends import get_backend
    from asyncbench.engine import paired
    from asyncbench.report.progress import ProgressDisplay
    from asyncbench.workloads import plugins

    base_by_id = {case.id: (case, skip) for case, skip in base_cases}
    head_ids = {case.id for case, _ in head_cases}
    both = [(case, skip) for case, skip in head_cases if case.id in base_by_id]
    workloads = {case.workload: plugins.find(case.workload) for case, _ in both}
    runnable = [
        case for case, skip in both if skip is None and base_by_id[case.id][1] is None and not workloads[case.workload].across_processes
    ]
    case_budget_error = request.family_error / max(len(runnable), 1)
    finished: list[PairedCase] = [PairedCase(i, "one-sided", "only on base") for i in base_by_id if i not in head_ids]
    finished += [PairedCase(c.id, "one-sided", "only on head") for c, _ in head_cases if c.id not in base_by_id]
    workers: dict[tuple[str, str, tuple[tuple[str, str], ...]], paired.SideWorker] = {}

    def worker(side: Side, tree: _Tree, backend_name: str) -> paired.SideWorker:
        backend = get_backend(backend_name)
        python = side.python if side.python != sys.executable else (backend.interpreter() or side.python)
        variables = {**backend.worker_environment(), **side.environment}
        key = (side.name, python, tuple(sorted(variables.items())))
        if key not in workers:
            workers[key] = paired.SideWorker(side.name, str(tree.root) if tree.root else None, python, variables)
        return workers[key]

    stderr = Console(stderr=True)
    display = ProgressDisplay(enabled=request.progress and stderr.is_terminal, console=stderr)
    previous = signal.signal(signal.SIGTERM, session.raise_terminated)
    stopped = None
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    try:
        if runnable:  # what each side runs on, as its own worker sees it (another Python has other versions)
            first = runnable[0]
            used = list(dict.fromkeys(c.backend for c in runnable))
            base_facts, head_facts = (
                _facts(worker(side, tree, first.backend), used, first.settings.timeout_s) for side, tree in zip(sides, trees, strict=True)
            )
            sides = (dataclasses.replace(sides[0], facts=base_facts), dataclasses.replace(sides[1], facts=head_facts))
        with display:
            for index, (case, skip) in enumerate(both):
                display.start(index, len(both), case)
                base_case, base_skip = base_by_id[case.id]
                if skip or base_skip:
                    finished.append(PairedCase(case.id, "skipped", skip or base_skip))
                    continue
                workload = workloads[case.workload]
                if workload.across_processes:
                    finished.append(PairedCase(case.id, "skipped", "measures itself across processes (torchrun ranks): not paired"))
                    continue
                case_budget = budget.Budget(case_budget_error, 1, case.settings.min_samples, case.settings.max_samples)
                pair = (worker(sides[0], trees[0], base_case.backend), worker(sides[1], trees[1], case.backend))
                finished.append(paired.pair(base_case, case, pair, case_budget, margin, workload, display.update))
    except KeyboardInterrupt as stop:
        stopped = EXIT_TERMINATED if isinstance(stop, session.Terminated) else EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)
        for side_worker in workers.values():
            side_worker.close()
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
