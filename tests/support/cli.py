"""The `asyncbench` command as tests run it: in a fresh interpreter (`asyncbench`), or in this process through click's
CliRunner (`invoke`), both in one environment: this checkout first on PYTHONPATH and no history store the caller's
environment names (ASYNCBENCH_HISTORY), unless a test gives one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, overload

#: this checkout, which a test's `python -m asyncbench` imports
ROOT = Path(__file__).resolve().parents[2]
#: how long a test's command line may take before it is taken for a hang
CLI_TIMEOUT_S = 300

#: `python -m asyncbench` with SIGINT's default handler installed first. A shell that starts the tests in the
#: background (`cmd &` without job control) makes its children ignore SIGINT, and a Python that starts with SIGINT
#: ignored never raises KeyboardInterrupt; these tests model a terminal's Ctrl-C, which the run must not ignore.
#: (Set in the child, not by a preexec_fn: forking a test process that has threads, JAX's for one, is unsafe.)
INTERRUPTIBLE_ASYNCBENCH = [
    sys.executable,
    "-c",
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('asyncbench', run_name='__main__', alter_sys=True)",
]
#: the same first line, for a test's own `python -c` script
INTERRUPTIBLE_PREAMBLE = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


def cli_env(env: Mapping[str, str] | None = None, unset: Iterable[str] = ()) -> dict[str, str]:
    """The environment of a test's `python -m asyncbench`: this process's, less ASYNCBENCH_HISTORY and the names in
    `unset`, with this checkout as PYTHONPATH, then `env` over it (which may name a store, or a PYTHONPATH of its own)."""
    dropped = {"ASYNCBENCH_HISTORY", *unset}
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, "PYTHONPATH": str(ROOT), **(env or {})}


@overload
def asyncbench(
    *args: str,
    cwd: Path | None = ...,
    env: Mapping[str, str] | None = ...,
    unset: Iterable[str] = ...,
    timeout: float = ...,
    text: Literal[True] = ...,
) -> subprocess.CompletedProcess[str]: ...


@overload
def asyncbench(
    *args: str,
    cwd: Path | None = ...,
    env: Mapping[str, str] | None = ...,
    unset: Iterable[str] = ...,
    timeout: float = ...,
    text: Literal[False],
) -> subprocess.CompletedProcess[bytes]: ...


def asyncbench(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    unset: Iterable[str] = (),
    timeout: float = CLI_TIMEOUT_S,
    text: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """`python -m asyncbench ARGS` in `cwd` (this process's when None), in cli_env(env, unset), its output captured
    (as text, unless `text` is False: a test of the bytes a terminal gets)."""
    return subprocess.run(
        [sys.executable, "-m", "asyncbench", *args],
        cwd=cwd,
        capture_output=True,
        text=text,
        env=cli_env(env, unset),
        timeout=timeout,
        check=False,
    )


def invoke(*args: str, catch_exceptions: bool = False, env: Mapping[str, str | None] | None = None, **options: Any) -> Any:
    """`asyncbench ARGS` in this process (click's CliRunner): with catch_exceptions=False a traceback fails the test.
    The same environment as `asyncbench` (no ASYNCBENCH_HISTORY unless `env` names one); click's Result."""
    from click.testing import CliRunner

    from asyncbench import cli

    environment: dict[str, str | None] = {"ASYNCBENCH_HISTORY": None, **(env or {})}
    return CliRunner().invoke(cli.main, list(args), catch_exceptions=catch_exceptions, env=environment, **options)


def in_process(*args: str, cwd: Path, env: Mapping[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """`asyncbench ARGS` run by `invoke` in this process, in `cwd`, given back as `asyncbench` gives it (exit status,
    stdout and stderr apart): for a file of refusals checked one case at a time, each of which would otherwise pay a
    fresh interpreter's start (0.5 s, and 1 s more where the command imports SciPy). An exception that escapes the
    command fails the test, as a traceback on a fresh interpreter's stderr would fail `refused`."""
    before = Path.cwd()  # contextlib.chdir is Python 3.11's; the tests run on 3.10 too
    os.chdir(cwd)
    try:
        result = invoke(*args, env=env)
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(["asyncbench", *args], result.exit_code, result.stdout, result.stderr)


def refused(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """One line `asyncbench: error: ...` holding every one of `words`, exit 2, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("asyncbench: error: "), lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]
