"""`python -m asyncbench ARGS` in a process of its own for each call, forked from an interpreter that has imported
asyncbench's modules once (a zygote), for a corpus of hundreds of command lines each run in a fresh process.

Each call is still a process of its own: its own session (a hang is killed with its children, by process group), its
own folder, environment, stdin (/dev/null) and stdout and stderr, the module `asyncbench` run as `__main__` as
`python -m` runs it, its exit status what a fresh interpreter's would be (a signal: minus its number), and nothing of
one call seen by the next (each is forked from the zygote, which runs nothing itself). What it saves is an
interpreter's start and the imports every command pays (0.5 s to 1.5 s a call on a busy 2-core machine).

What is not the same: modules that asyncbench imports lazily are already imported (PRELOADED: none of a framework,
so no framework's threads are forked), and the interpreter's start-up is not re-run (its stdio encoding, its
sys.path, come from the zygote's environment, which is the test's: cli.cli_env()). A test of import laziness or of
start-up itself must use a fresh interpreter (cli.asyncbench).

Run as a module (`python -m tests.support.forked_cli`), it is the zygote: a JSON request a line on stdin, answered by
the child's pid, then its exit status, a line each."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

#: what the zygote imports before it forks: the CLI and the libraries commands import lazily (never a framework)
PRELOADED = (
    "asyncbench.cli",
    "asyncbench.spec.config",
    "asyncbench.results.schema",
    "asyncbench.history.store",
    "asyncbench.history.edivisive.analysis",
    "sqlalchemy",
)


class ForkedCli:
    """The zygote, started on the first call; `close` ends it."""

    def __init__(self, env: Mapping[str, str], cwd: Path):
        self._env, self._cwd = dict(env), cwd
        self._zygote: subprocess.Popen[bytes] | None = None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._zygote is None or self._zygote.poll() is not None:
            self._zygote = subprocess.Popen(
                [sys.executable, "-m", "tests.support.forked_cli"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,  # unbuffered: select() then sees every line the zygote writes
                env=self._env,
                cwd=self._cwd,
            )
        return self._zygote

    def run(self, args: list[str], cwd: Path, env: Mapping[str, str], output: Path, timeout_s: float) -> tuple[int, str, str] | None:
        """(exit status, stdout, stderr) of `python -m asyncbench ARGS` in `cwd` with exactly `env`, its streams kept in
        the files `output`.out and `output`.err (outside `cwd`); None when it did not end in `timeout_s` (it is then
        killed, with its process group)."""
        zygote = self._started()
        assert zygote.stdin is not None
        assert zygote.stdout is not None
        out, err = output.with_suffix(".out"), output.with_suffix(".err")
        request = {"args": args, "cwd": str(cwd), "env": dict(env), "stdout": str(out), "stderr": str(err)}
        zygote.stdin.write(json.dumps(request).encode() + b"\n")
        zygote.stdin.flush()
        pid = json.loads(zygote.stdout.readline())["pid"]
        ready, _, _ = select.select([zygote.stdout], [], [], timeout_s)
        if not ready:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:  # it ended just now
                pass
        code = json.loads(zygote.stdout.readline())["code"]
        if not ready:
            return None
        return code, out.read_bytes().decode("utf-8", "replace"), err.read_bytes().decode("utf-8", "replace")

    def close(self) -> None:
        if self._zygote is not None:
            assert self._zygote.stdin is not None
            self._zygote.stdin.close()
            self._zygote.wait(timeout=60)


def _child(request: dict[str, Any], kept: list[Any]) -> None:
    """In the forked child: become the call `request` names, run it as `python -m asyncbench` does, and exit with its
    status (never returns)."""
    import atexit
    import runpy
    import traceback

    code = 1
    try:
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        written = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], written), (2, request["stderr"], written)):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        kept.append(sys.stdin)  # the zygote's request pipe's reader, never closed here (its fd 0 is /dev/null now)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's stdin, for its life
        sys.argv = ["asyncbench", *request["args"]]
        runpy.run_module("asyncbench", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as ended:
        if ended.code is None:
            code = 0
        elif isinstance(ended.code, int):
            code = ended.code
        else:
            print(ended.code, file=sys.stderr)  # as the interpreter does with a SystemExit that is not a number
    except BaseException:  # noqa: BLE001 - what a fresh interpreter would print for an uncaught exception
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()  # what an interpreter runs as it exits
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _serve() -> None:
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)
    kept: list[Any] = []
    requests = sys.stdin.buffer
    answers = sys.stdout.buffer
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, kept)
        answers.write(json.dumps({"pid": pid}).encode() + b"\n")
        answers.flush()
        _, status = os.waitpid(pid, 0)
        answers.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
        answers.flush()


if __name__ == "__main__":
    _serve()
