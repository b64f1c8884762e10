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
from asyncbench.history import masking
from asyncbench.host import worktrees
from asyncbench.report import paired as views
from asyncbench.results import budget, fields, outputs
from asyncbench.results.model import Case
from asyncbench.results.paired import ABReport, PairedCase, Side, dumps
from asyncbench.verdicts import compare
from asyncbench.verdicts import paired as verdicts
from asyncbench.version import __version__

Say = Callable[[str], None]
IDLE_SIDE = "frozen with SIGSTOP between its samples (no spinning thread pool, GC or engine thread competes); user thread settings kept"
# How long a side's interpreter check may take before it counts as not answering.
PROBE_TIMEOUT_S = 60.0
# Parts of a variable's name that say its value is a credential. A gate's output travels further than its secrets
# may (a CI log, an uploaded artifact, a pull-request comment anyone can read), so such values are shown as MASK
# everywhere (terminal, JSON, markdown); the side's process still gets the real value. Matched anywhere in the
# name, any case: API_TOKEN, AWS_SECRET_ACCESS_KEY, HF_AUTH, session_cookie. A harmless name caught (MONKEY_...)
# costs only its shown value.
SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")
# Words of a name (split at '_') that mean a credential but are too short to look for inside other words: PAT
# would mask PATH, PASS would mask PASSTHROUGH, PWD is also the shell's working directory (masked all the same).
SECRET_NAME_WORDS = frozenset({"PASS", "PAT", "PWD", "PW", "PIN", "DSN", "PRIVATE", "CERT", "SIGNATURE", "SALT", "OTP"})
# A value that looks like a credential whatever its name: an opaque token (GitHub's ghp_..., a JWT's parts, an API
# key) is a long run of letters and digits together; a path, a number or a word list is not. Below 20 characters
# too many ordinary values (versions, hashes of a short form) would be hidden for nothing.
TOKEN_LIKE = re.compile(r"(?=[A-Za-z0-9_\-.+=]*\d)(?=[A-Za-z0-9_\-.+=]*[A-Za-z])[A-Za-z0-9_\-.+=]{20,}")
# A secret shorter than this is not searched for in error texts: masking every "1" or "on" would garble them.
SCRUB_MIN_CHARS = 4
MASK = masking.MASK
# What a --base-env / --head-env name may be: a POSIX shell's variable name. Anything else (a space, '-', an escape
# sequence, a newline that smuggles a second KEY=VALUE into a log) is a typo or an attack, and a name is shown in
# every output.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
    """KEY=VALUE pairs; InputError for one without '=' or with an empty key, a key that is not a variable's name
    (ENV_NAME), or a value holding a control character (a newline would forge lines of the terminal, the JSON's
    readers and the pull-request comment; an escape would rewrite the terminal). A value is never repeated in the
    error: it may be a secret."""
    found = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            given = repr(item) if not sep else "with an empty name"
            raise InputError(f"{option} {given}: expected KEY=VALUE, e.g. {option} OMP_NUM_THREADS=1")
        if not ENV_NAME.fullmatch(key):
            raise InputError(
                f"{option} {key[:80]!r}: not a variable's name (letters, digits and _, not starting with a digit), "
                f"e.g. {option} OMP_NUM_THREADS=1"
            )
        control = fields.CONTROL.search(value)
        if control:
            raise InputError(
                f"{option} {key}: its value holds a control character ({control.group()!r} at position {control.start()}); "
                "a variable's value here is one line of printable text"
            )
        if key in found:  # which one was meant? the last would win silently, and the gate compare something else
            raise InputError(f"{option} {key}: given twice; give each variable once")
        found[key] = value
    return found


def is_secret(name: str) -> bool:
    """Whether a variable's name says its value is a credential (SECRET_NAME_PARTS anywhere in it, or one of
    SECRET_NAME_WORDS as a word of it)."""
    upper = name.upper()
    return any(part in upper for part in SECRET_NAME_PARTS) or not SECRET_NAME_WORDS.isdisjoint(upper.split("_"))


def shown_value(name: str, value: str) -> str:
    """A variable's value as every output shows it: masked where the name says it is a credential or the value
    looks like one (TOKEN_LIKE); a URL keeps its shape with its password masked (`postgresql://u:***@h/db`)."""
    if is_secret(name) or TOKEN_LIKE.fullmatch(value):
        return MASK
    return masking.mask(value)


def shown(variables: Mapping[str, str]) -> dict[str, str]:
    """The variables as every output shows them (shown_value)."""
    return {name: shown_value(name, value) for name, value in variables.items()}


def scrubber(*sides: Mapping[str, str]) -> Callable[[str | None], str | None]:
    """A text with every value the outputs mask replaced by MASK: a side's error may quote its own variables (a
    workload that raises `ValueError(f"bad token {token}")`), and the reason goes to the terminal, the JSON, the
    pull-request comment and, recorded, the history."""
    masked = [value for variables in sides for name, value in variables.items() if shown_value(name, value) != value]
    hidden = sorted({value for value in masked if len(value) >= SCRUB_MIN_CHARS}, key=len, reverse=True)

    def scrub(text: str | None) -> str | None:
        if text is None:
            return None
        for value in hidden:
            text = text.replace(value, MASK)
        return text

    return scrub


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
    """The repository that holds the first config (with -w alone: the current directory's)."""
    where = Path(request.selection.configs[0]).resolve().parent if request.selection.configs else Path.cwd()
    try:
        return Path(worktrees.git(where, "rev-parse", "--show-toplevel"))
    except subprocess.CalledProcessError:
        raise InputError(f"{where} is not in a git repository: --base and --head name revisions of the config's repository") from None


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
        base_cases = _plan(request, _configs_in(base_tree, repo, request.selection.configs, "--base"))
        head_cases = _plan(request, _configs_in(head_tree, repo, request.selection.configs, "--head"))
        sides = (  # as the outputs show them; each side's process gets its real variables
            Side("base", base_tree.revision, base_python, base_version, shown(base_env)),
            Side("head", head_tree.revision, sys.executable, platform.python_version(), shown(head_env)),
        )
        report, stopped = _execute(request, margin, sides, (base_env, head_env), (base_tree, head_tree), base_cases, head_cases)
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

    given = {side.name: side_variables for side, side_variables in zip(sides, variables, strict=True)}

    def worker(side: Side, tree: _Tree, backend_name: str) -> paired.SideWorker:
        backend = get_backend(backend_name)
        python = side.python if side.python != sys.executable else (backend.interpreter() or side.python)
        environment = {**backend.worker_environment(), **given[side.name]}
        key = (side.name, python, tuple(sorted(environment.items())))
        if key not in workers:
            workers[key] = paired.SideWorker(side.name, str(tree.root) if tree.root else None, python, environment)
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
