"""Real signals to the commands that write besides `run` (`merge`, `report`, `record`): SIGINT → 130, SIGTERM → 143,
one line that says so and no traceback, no temporary file left beside the output, the old output whole (or the new
one, whole), and a store with no run recorded in part.

Two kinds of test. One holds the command in its write (a step of it made to wait, by a preamble of the test's own:
nothing in asyncbench knows of it) and signals it there, where a temporary file is full-size or a transaction open:
the case that went wrong. The other signals the plain command at several points of its run (on a large results file:
a real run's rows replicated), each of which may land anywhere: reading, merging, storing, rendering or writing."""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.cli import INTERRUPTIBLE_ASYNCBENCH
from tests.support.restated import restated
from tests.support.signals import catches

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 300
#: rows of the large results file: enough that `record` and `report` spend a second or more reading, storing,
#: drawing and writing them (a shard's file states its plan, which `merge` proves: its input is a real shard's)
CASES = 400

PLAN = """\
experiments:
  - name: sync_async
    workload: sync_async
    backends: [numpy]
    devices: [cpu]
    sweep: {n_ops: [10, 30]}
"""

#: `python -m asyncbench` (SIGINT's default handler first, as INTERRUPTIBLE_ASYNCBENCH) with one step of its write held:
#: when the process reaches it, it makes the file named by its first argument and sleeps, so that a signal lands while
#: the output's temporary file is written in full but not yet renamed (`fsync`), or while a run is half recorded, in its
#: transaction (`record`: before the series' change points are found again, the run's rows already inserted).
HELD = """
import os, runpy, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
marker, step = sys.argv.pop(1), sys.argv.pop(1)

def held(real):
    def step_held(*args, **kwargs):
        done = real(*args, **kwargs)
        open(marker, "w").close()
        time.sleep(120)
        return done
    return step_held

if step == "fsync":
    os.fsync = held(os.fsync)
else:
    from asyncbench.history import recording
    recording.refresh_changes = held(recording.refresh_changes)
runpy.run_module("asyncbench", run_name="__main__", alter_sys=True)
"""

SIGNALS = [pytest.param(signal.SIGINT, 130, id="SIGINT"), pytest.param(signal.SIGTERM, 143, id="SIGTERM")]
OLD = b'{"an earlier output": "kept whole"}\n'


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "ASYNCBENCH_HISTORY"}, "PYTHONPATH": str(ROOT)}


def _replicated(results: Path, count: int, path: Path) -> Path:
    """A real run's results with its rows copied to `count` cases, each a sweep point of its own: a plain results file
    (the shard's stamp left out: a shard's file states its plan, which `merge` proves from it)."""
    data = json.loads(results.read_text())
    rows = []
    for i in range(count):
        row = copy.deepcopy(data["results"][i % len(data["results"])])
        row["params"]["n_ops"] = 1000 + i
        row["id"] = f"sync_async[numpy,cpu,n_ops={1000 + i}]"
        rows.append(restated(row))  # its per-op figures those of its n_ops (a reader holds them to the samples)
    data["results"] = rows
    data.pop("shard", None)
    data["run_id"] = uuid.uuid4().hex  # a run of its own (the history keys runs by it)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """A real shard's file (`merge` takes it), a large results file (`record` records it) and a store that holds it
    (`report` draws it)."""
    folder = tmp_path_factory.mktemp("inputs")
    (folder / "plan.yaml").write_text(PLAN)
    subprocess.run(
        [sys.executable, "-m", "asyncbench", "run", "plan.yaml", "--quick", "--no-progress", "--allow-inconclusive", "--shard", "1/1"]
        + ["-o", "shard.json"],
        cwd=folder,
        env=_env(),
        check=True,
        capture_output=True,
        timeout=TIMEOUT_S,
    )
    large = _replicated(folder / "shard.json", CASES, folder / "large.json")
    small = _replicated(folder / "shard.json", 3, folder / "small.json")
    for source, store in ((large, "history.sqlite"), (small, "older.sqlite")):
        subprocess.run(
            [sys.executable, "-m", "asyncbench", "record", str(source), "--history", str(folder / store)],
            env=_env(),
            check=True,
            capture_output=True,
            timeout=TIMEOUT_S,
        )
    return {"shard": folder / "shard.json", "results": large, "store": folder / "history.sqlite", "older": folder / "older.sqlite"}


def _command(name: str, inputs: dict[str, Path], out: Path) -> tuple[list[str], Path]:
    """The command line of `name` writing into the folder `out`, and the file it writes."""
    if name == "merge":
        return ["merge", str(inputs["shard"]), "--allow-inconclusive", "-o", str(out / "all.json")], out / "all.json"
    if name == "report":
        return ["report", "-o", str(out / "page.html"), "--history", str(inputs["store"])], out / "page.html"
    shutil.copy(inputs["older"], out / "h.sqlite")  # a store that holds a run already: it must keep it, and take all or none
    return ["record", str(inputs["results"]), "--history", str(out / "h.sqlite")], out / "h.sqlite"


def _prepared(name: str, inputs: dict[str, Path], out: Path) -> tuple[list[str], Path]:
    out.mkdir()
    args, target = _command(name, inputs, out)
    if name != "record":
        target.write_bytes(OLD)  # an earlier output, which an interrupted command must leave as it was
    return args, target


def _runs(store: Path) -> list[tuple[int, int]]:
    """Each recorded run's id and how many points it holds."""
    with sqlite3.connect(store) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        runs, points = next(t for t in tables if t.endswith("runs")), next(t for t in tables if t.endswith("points"))
        found = db.execute(f"SELECT r.id, COUNT(p.run_id) FROM {runs} r LEFT JOIN {points} p ON p.run_id = r.id GROUP BY r.id")
        return sorted(found.fetchall())


def _assert_no_leftovers(out: Path, target: Path) -> None:
    """Nothing beside the output: no hidden temporary file, no SQLite journal of a transaction cut short."""
    assert sorted(p.name for p in out.iterdir()) == [target.name]


def _assert_said_once(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert "Aborted" not in stderr, stderr
    said = [line for line in stderr.splitlines() if "interrupted" in line]
    assert len(said) == 1, stderr


def _assert_whole(name: str, target: Path, older_runs: list[tuple[int, int]], inputs: dict[str, Path], full_points: int) -> None:
    """The output is the old one, byte for byte, or the whole new one (the signal came after its rename)."""
    if name == "record":
        runs = _runs(target)
        assert runs[: len(older_runs)] == older_runs
        assert runs[len(older_runs) :] in ([], [(runs[-1][0], full_points)]), runs  # the new run whole, or not at all
        return
    content = target.read_bytes()
    if content == OLD:
        return
    if name == "merge":
        assert len(json.loads(content)["results"]) == len(json.loads(inputs["shard"].read_text())["results"])
    else:
        assert content.rstrip().endswith(b"</html>")


def _assert_finished(name: str, target: Path, older_runs: list[tuple[int, int]], stderr: str) -> None:
    """The command ended by itself: it said what it wrote, and its output is the new one."""
    assert "written:" in stderr or "recorded as run" in stderr, stderr
    if name == "record":
        assert len(_runs(target)) == len(older_runs) + 1
    else:
        assert target.read_bytes() != OLD


@pytest.fixture(scope="module")
def full_points(inputs) -> int:
    """How many points the large shard's run holds in a store."""
    return _runs(inputs["store"])[0][1]


@pytest.mark.parametrize("signum, code", SIGNALS)
@pytest.mark.parametrize("name, step", [("merge", "fsync"), ("report", "fsync"), ("record", "record")])
def test_a_signal_in_the_write_leaves_no_temporary_file_and_the_old_output_whole(tmp_path, inputs, name, step, signum, code):
    args, target = _prepared(name, inputs, tmp_path / "out")
    older_runs = _runs(target) if name == "record" else []
    marker = tmp_path / "held"
    command = subprocess.Popen(
        [sys.executable, "-c", HELD, str(marker), step, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        start_new_session=True,
    )
    deadline = time.monotonic() + TIMEOUT_S
    while not marker.exists() and command.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marker.exists(), command.communicate(timeout=60)[1]
    if name != "record":  # held after the temporary file is written in full: the case that left it behind
        assert any(p.name.endswith(".tmp") for p in target.parent.iterdir())
    command.send_signal(signum)
    _, stderr = command.communicate(timeout=60)
    assert command.returncode == code, stderr
    _assert_said_once(stderr)
    _assert_no_leftovers(target.parent, target)
    if name == "record":
        assert _runs(target) == older_runs  # rolled back: no part of the interrupted run recorded
    else:
        assert target.read_bytes() == OLD


_TIMES: dict[str, float] = {}


def _uninterrupted_s(name: str, inputs: dict[str, Path], folder: Path) -> float:
    """How long the command takes when nobody stops it (once per command), having checked that it succeeds."""
    if name not in _TIMES:
        args, _ = _prepared(name, inputs, folder)
        started = time.monotonic()
        done = subprocess.run([*INTERRUPTIBLE_ASYNCBENCH, *args], capture_output=True, text=True, env=_env(), timeout=TIMEOUT_S)
        assert done.returncode == 0, done.stderr
        _TIMES[name] = time.monotonic() - started
    return _TIMES[name]


def _startup_s() -> float:
    """How long the interpreter takes to reach asyncbench's command line (`--version`, the slowest of three): before
    that no code of asyncbench's runs, and a signal has its default action (SIGTERM ends the process, as 143 in a
    shell; Ctrl-C is Python's KeyboardInterrupt in an import), with nothing yet opened to leave half-written."""
    if "startup" not in _TIMES:
        spans = []
        for _ in range(3):
            started = time.monotonic()
            subprocess.run([*INTERRUPTIBLE_ASYNCBENCH, "--version"], capture_output=True, env=_env(), timeout=TIMEOUT_S, check=True)
            spans.append(time.monotonic() - started)
        _TIMES["startup"] = max(spans)
    return _TIMES["startup"]


#: where each signal lands in an uninterrupted run's time after the interpreter's start-up: from reading the input to
#: just before its end
POINTS = (0.15, 0.45, 0.75, 0.97)


@pytest.mark.parametrize("signum, code", SIGNALS)
@pytest.mark.parametrize("name", ["merge", "report", "record"])
def test_a_signal_at_any_point_ends_with_its_code_and_leaves_the_output_whole(tmp_path, inputs, full_points, name, signum, code):
    took, startup = _uninterrupted_s(name, inputs, tmp_path / "uninterrupted"), _startup_s()
    for index, point in enumerate(POINTS):
        args, target = _prepared(name, inputs, tmp_path / f"at-{index}")
        older_runs = _runs(target) if name == "record" else []
        command = subprocess.Popen(
            [*INTERRUPTIBLE_ASYNCBENCH, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env()
        )
        if signum == signal.SIGTERM:
            # from the moment the command's own handler is in place (session.interrupts): under a CI run's load the
            # interpreter's start outlasted `_startup_s` by half the command's time, and the signal's default action
            # ended it before any code of asyncbench's ran, at a point meant to land in its work
            deadline = time.monotonic() + TIMEOUT_S
            while command.poll() is None and not catches(command.pid, signum) and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(point * max(took - startup, 0.0))
        else:  # Python's own SIGINT handler is in place from the interpreter's start: no moment to wait for
            time.sleep(startup + point * max(took - startup, 0.0))
        command.send_signal(signum)
        _, stderr = command.communicate(timeout=TIMEOUT_S)
        where = f"{name} signalled at {point:.0%} of {took:.1f} s"
        # -N: the command had ended, and the signal's own action ended the interpreter's teardown after it (a shell
        # reads 128 + N, the same code), with nothing left to write
        assert command.returncode in (code, 0, -signum), f"{where}: {stderr}"
        if command.returncode == code:
            _assert_said_once(stderr)
        elif command.returncode == -signum and not stderr and index == 0:
            # the signal came while the interpreter still started (slower than `_startup_s` measured, beside another
            # test process): its default action ended it before any code of asyncbench's ran; the output is as it
            # was (_assert_whole, below)
            pass
        else:
            assert "Traceback" not in stderr, f"{where}: {stderr}"
            _assert_finished(name, target, older_runs, stderr)
        _assert_no_leftovers(target.parent, target)
        _assert_whole(name, target, older_runs, inputs, full_points)
