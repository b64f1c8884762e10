"""`ab`'s two sides: each side's source tree (a temporary git worktree of --base / --head, or the working tree),
its configs and -w files as that tree has them, and the interpreter it runs under (--base-python).

Everything wrong with them is one line and exit 2 before anything runs; a
worktree an earlier `ab` killed outright left behind is removed first.
"""

from __future__ import annotations

import contextlib
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from asyncbench.errors import InputError
from asyncbench.host import worktrees
from asyncbench.results.model import Case
from asyncbench.say import Say

# How long a side's interpreter check may take before it counts as not answering.
PROBE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Tree:
    """A side's source: the directory to read configs from and to import first (None: no repository involved)."""

    root: Path | None
    revision: str


def check_given(base: str | None, head: str | None, base_python: str | None) -> None:
    """InputError for an option given empty: `--base ""` (an unset CI variable, `--base "$BASE"`) is a mistake, not
    "no base": taken as absent it would compare the working tree with itself and pass."""
    revision = "a git revision (a branch, tag or commit)"
    wanted = {"--base": revision, "--head": revision, "--base-python": "the path of a Python interpreter"}
    for option, value in (("--base", base), ("--head", head), ("--base-python", base_python)):
        if value is not None and not value.strip():
            raise InputError(f"{option} is empty: give {wanted[option]}")


def check_configs(configs: tuple[str, ...]) -> None:
    """Every config is a file here, said before anything else is asked of it (its repository, its revisions): a
    typo in its name must be named, not reported as a folder outside git."""
    for config in configs:
        path = Path(config)
        if not path.exists():
            raise InputError("no such file", location=config)
        if not path.is_file():
            raise InputError("is a directory, not a config file" if path.is_dir() else "is not a regular file", location=config)


def check_workload_files(workloads: tuple[str, ...]) -> None:
    """Every -w file is a file here, named from the working directory as `run -w` names it, said once before either
    side is checked out: the name is the command line's, and a missing one read as one side's fault (`the head side
    (72c6af48ee (dlhead)): -w 'dlsteps.py:jax_step': no such file …`, the file being bench/dlsteps.py)."""
    for name in workloads:
        where = name.rpartition(":")[0] if ":" in name else name
        if not (where.endswith(".py") or "/" in where or "\\" in where):  # a built-in, module or plugin name
            continue
        path = (Path.cwd() / where).expanduser().resolve()
        if not path.is_file():
            raise InputError(f"-w {name!r}: no such file {path} (a -w file is named from the working directory, as `run -w` names it)")


def repository(configs: tuple[str, ...], workloads: tuple[str, ...]) -> Path:
    """The repository that holds the first config (with -w alone: the first -w file's, else the current directory's).
    InputError, one line, for another config outside it: each side reads a config as its own revision has it, and
    no revision of this repository has that one."""
    files = [Path(where) for where in map(_workload_file, workloads) if where is not None]
    first = Path(configs[0]) if configs else (files[0] if files else None)
    where = first.resolve().parent if first is not None and first.exists() else Path.cwd()
    try:
        repo = Path(worktrees.git(where, "rev-parse", "--show-toplevel"))
    except subprocess.CalledProcessError:
        holder = "config's" if configs else "-w file's" if files else "working directory's"
        raise InputError(f"{where} is not in a git repository: --base and --head name revisions of the {holder} repository") from None
    for config in configs[1:]:
        if not Path(config).resolve().is_relative_to(repo.resolve()):
            raise InputError(
                f"outside the repository {repo} of the first config, {configs[0]}: --base and --head read each config as "
                "their revision has it, and no revision has this one; put it in the repository (or gate it with an ab of its own)",
                location=config,
            )
    return repo


def _commit(repo: Path, revision: str, option: str) -> str:
    try:
        return worktrees.git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    except subprocess.CalledProcessError:
        raise InputError(f"{option} {revision!r}: no such revision in {repo}{_shallow_hint(repo)}") from None


def _shallow_hint(repo: Path) -> str:
    """Why a revision may be missing where CI checked out one commit alone (actions/checkout's default depth 1)."""
    try:
        shallow = worktrees.git(repo, "rev-parse", "--is-shallow-repository") == "true"
    except subprocess.CalledProcessError:
        return ""
    return (
        " (the clone is shallow: fetch the history, e.g. `git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout)"
        if shallow
        else ""
    )


@contextlib.contextmanager
def checkout(repo: Path, revision: str | None, option: str) -> Iterator[Tree]:
    """A revision as a temporary worktree, removed afterwards (None: the working tree itself)."""
    if revision is None:
        yield Tree(repo, "working tree")
        return
    sha = _commit(repo, revision, option)
    with contextlib.ExitStack() as stack:
        try:
            place = stack.enter_context(worktrees.checkout(repo, sha, option.strip("-")))
        except subprocess.CalledProcessError as exc:
            raise InputError(f"{option} {revision!r}: cannot check it out: {exc.stderr.strip()}") from None
        yield Tree(place, f"{sha[:10]} ({revision})")


def prune(repo: Path, say: Say) -> None:
    """Remove the worktrees an earlier `ab` killed outright left in this repository (their owner is gone)."""
    for left in worktrees.prune_stale(repo):
        say(f"removed {left.path}: a worktree left by asyncbench process {left.pid}, which ended without removing it")


def configs_in(tree: Tree, repo: Path | None, configs: tuple[str, ...], option: str) -> tuple[str, ...]:
    """The configs as this side's tree has them: the same path relative to the repository."""
    if repo is None or tree.root is None:
        return configs
    mapped = []
    for config in configs:
        named = Path(config)
        # the path as named, its folder resolved: a link (configs/ci-gate.yaml, into the package's suites after 0.1.0)
        # is read as the side's revision has that path, where it may still be the file itself
        relative = (named.parent.resolve() / named.name).relative_to(repo)
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


def workloads_in(tree: Tree, repo: Path | None, workloads: tuple[str, ...], option: str) -> tuple[str, ...]:
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


def check_gpus(cases: list[Case]) -> None:
    """InputError, one line, when a case measures on a GPU and a GPU admits one process at a time (EXCLUSIVE_PROCESS
    compute mode): ab measures its two sides in two processes at once, each keeping its CUDA context while it is
    frozen between samples, which that mode refuses. Any such GPU counts: a JAX side opens every GPU it sees."""
    from asyncbench.backends import cuda_devices
    from asyncbench.engine.case_workers import uses_gpu

    on_gpu = [case for case in cases if uses_gpu(case)]
    exclusive = sorted(i for i, mode in cuda_devices.compute_modes().items() if mode in cuda_devices.ONE_PROCESS) if on_gpu else []
    if exclusive:
        raise InputError(
            f"cuda:{exclusive[0]} admits one process at a time (compute mode EXCLUSIVE_PROCESS), and ab measures {on_gpu[0].id} "
            "on both sides at once, in two processes: gate it on a GPU in default mode, or run each side with `run` and "
            "compare the results with `asyncbench compare`"
        )


def probe_python(python: str) -> str:
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
