"""`asyncbench ab` when things go wrong: killed outright, outputs that cannot be written, secrets in --base-env.

A SIGKILLed `ab` leaves no worker (not even the side frozen with SIGSTOP)
and its worktree is removed by the next `ab`; its outputs are checked
before anything runs and a write that fails at the end is one line and
exit 3; a secret-looking variable's value reaches its side and is shown
nowhere.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from asyncbench import cli
from asyncbench.host import worktrees
from asyncbench.results import writing
from tests.support.ab_repo import CONFIG, ONE_BLAS_THREAD, ab, git

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds processes by their environment in /proc")

#: the environment variable that marks every process one test started (the workers inherit it)
MARK = "ASYNCBENCH_TEST_MARK"
#: a case that measures for two minutes: long enough to be killed in
LONG = CONFIG.replace("min_samples: 6, max_time_s: 3", "min_samples: 100000, max_samples: 100000, max_time_s: 120")


def marked(mark: str) -> list[int]:
    """Every live process whose environment holds MARK=mark (a zombie has no environment left to read)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"{MARK}={mark}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_marked(mark: str) -> None:
    """Whatever a test left behind (a failure of what it checks must not leave stopped processes on the machine)."""
    for pid in marked(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def worktree_count(repo: Path) -> int:
    """The repository's worktrees besides its own."""
    return git(repo, "worktree", "list", "--porcelain").count("worktree ") - 1


@pytest.mark.slow
def test_a_sigkilled_ab_leaves_no_worker_even_a_frozen_one_and_the_next_ab_removes_its_worktree(repo):
    (repo / "gate.yaml").write_text(LONG)
    git(repo, "commit", "-qam", "a long case")
    mark = uuid.uuid4().hex
    process = subprocess.Popen(
        [sys.executable, "-m", "asyncbench", "ab", "gate.yaml", "--base", "HEAD", "--no-progress"],
        cwd=repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **ONE_BLAS_THREAD, MARK: mark},
    )
    try:
        parent = psutil.Process(process.pid)
        deadline = time.monotonic() + 60
        frozen = False
        while not frozen and time.monotonic() < deadline:  # both sides up, one of them stopped between its samples
            try:
                frozen = any(child.status() == psutil.STATUS_STOPPED for child in parent.children())
            except psutil.NoSuchProcess:
                pass
            time.sleep(0.05)
        assert frozen, "no side was ever seen frozen"
        assert len(marked(mark)) >= 3  # ab and its two sides
        process.kill()
        process.wait(timeout=30)
        deadline = time.monotonic() + 5
        while marked(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not marked(mark), "a worker outlived the ab that started it"
    finally:
        if process.poll() is None:
            process.kill()
        kill_marked(mark)
    (left,) = worktrees.stale(repo)  # nothing of the killed ab could remove it
    assert left.path.is_dir()
    assert left.pid == process.pid
    (repo / "gate.yaml").write_text(CONFIG)
    git(repo, "commit", "-qam", "short again")
    done = ab(
        "gate.yaml", "--base", "HEAD", "--allow-inconclusive", "--gate-time", "10s", "--gate-time-max", "10s", cwd=repo
    )  # a verdict is not asked
    assert done.returncode in (0, 1), done.stderr
    assert f"removed {left.path}: a worktree left by asyncbench process {process.pid}" in done.stderr
    assert not left.path.exists()
    assert worktree_count(repo) == 0  # its own worktree gone too


def test_only_asyncbench_worktrees_whose_owner_is_gone_are_pruned(repo, tmp_path_factory):
    places = tmp_path_factory.mktemp("places")
    ended = subprocess.Popen(["true"])
    ended.wait()
    me, started, here = os.getpid(), worktrees._started(os.getpid()), worktrees.host_tag()
    names = {
        "dead": f"asyncbench-base-{here}-{ended.pid}-{started}-a1",  # its owner has exited
        "reused": f"asyncbench-head-{here}-{me}-{started + 1}-b2",  # its pid now belongs to a later process
        "gone": f"asyncbench-base-{here}-{ended.pid}-{started}-c3",  # owner gone, and its folder removed already
        "alive": f"asyncbench-base-{here}-{me}-{started}-d4",  # this process: still running, so kept
        "elsewhere": f"asyncbench-base-0000abcd-{ended.pid}-{started}-e5",  # another machine's: not ours to judge
        "other": "asyncbench-notes",  # not ours by its name
        "user": "feature-branch",  # the user's own
    }
    for name in names.values():
        git(repo, "worktree", "add", "-q", "--detach", str(places / name), "HEAD")
    os.rename(places / names["gone"], places / "moved-away")
    pruned = worktrees.prune_stale(repo)
    assert sorted(p.path.name for p in pruned) == sorted([names["dead"], names["reused"], names["gone"]])
    listed = git(repo, "worktree", "list", "--porcelain")
    for kept in ("alive", "elsewhere", "other", "user"):
        assert str(places / names[kept]) in listed
        assert (places / names[kept]).is_dir()
    for removed in ("dead", "reused", "gone"):
        assert str(places / names[removed]) not in listed
        assert not (places / names[removed]).exists()
    assert worktree_count(repo) == 4


def test_a_worktree_made_by_ab_names_its_owner_and_goes_afterwards(repo):
    sha = git(repo, "rev-parse", "HEAD")
    with worktrees.checkout(repo, sha, "base") as place:
        assert (place / "work.py").is_file()
        assert worktrees.stale(repo) == []  # its owner (this process) runs
        assert worktrees.OWNED.match(place.name)["pid"] == str(os.getpid())
    assert not place.exists()
    assert worktree_count(repo) == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (("-o", "missing/ab.json"), "directory 'missing' does not exist"),
        (("--markdown", "missing/ab.md"), "directory 'missing' does not exist"),
        (("-o", "ab.out", "--markdown", "./ab.out"), "the same file is named for two outputs (-o and --markdown)"),
    ],
)
def test_outputs_that_cannot_be_written_are_refused_before_anything_runs(repo, args, message):
    started = time.monotonic()
    done = ab("gate.yaml", "--base", "HEAD", *args, cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert not (repo / "ab.out").exists()
    assert time.monotonic() - started < 30  # refused, not measured first (the case alone takes 3 s and more)
    assert worktree_count(repo) == 0


@pytest.mark.slow
def test_a_full_disk_at_the_end_is_one_line_and_exit_3_and_the_comparison_is_still_shown(repo, monkeypatch):
    monkeypatch.chdir(repo)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    (repo / "ab.json").write_text('{"kept": "the previous file"}\n')

    def disk_full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writing.os, "fsync", disk_full)
    done = CliRunner().invoke(
        cli.main,
        [
            "ab",
            "gate.yaml",
            "--base-env",
            "X_SIDE=base",
            "--no-progress",
            "--allow-inconclusive",
            "--gate-time",  # the shortest gate: what is asserted is the failed write, not a verdict
            "10s",
            "--gate-time-max",  # and no time past it for an undecided case
            "10s",
            "-o",
            "ab.json",
            "--markdown",
            "ab.md",
        ],
    )
    assert done.exit_code == 3, done.output
    assert "Traceback" not in done.output
    assert done.output.count("asyncbench: error: cannot write") == 2
    assert "cannot write ab.json: No space left on device" in done.output
    assert "could not write ab.json" in done.output  # a reason of the exit code
    assert "work[numpy,cpu]" in done.output  # the comparison itself is shown
    assert (repo / "ab.json").read_text() == '{"kept": "the previous file"}\n'
    assert not (repo / "ab.md").exists()
    assert not list(repo.glob(".ab.*"))  # no temporary file left


SECRETIVE = """\
import os

# each side checks that its variables arrived as given, not as they are shown
for name, real in (("API_TOKEN", "hunter2-base"), ("DB_PASSWORD", "pw-head")):
    if name in os.environ and os.environ[name] != real:
        raise RuntimeError(f"{name} did not arrive")
REPEAT = 20
"""


def test_secret_looking_variables_are_masked_in_every_output_and_reach_their_side(repo):
    (repo / "mypkg.py").write_text(SECRETIVE)
    done = ab(
        "gate.yaml",
        "--base-env",
        "API_TOKEN=hunter2-base",
        "--base-env",
        "WORK_MODE=plain",
        "--head-env",
        "DB_PASSWORD=pw-head",
        "--allow-inconclusive",
        "--gate-time",  # the shortest gate: what is asserted is where the values went, not a verdict
        "10s",
        "--gate-time-max",  # and no time past it for an undecided case
        "10s",
        "-o",
        "ab.json",
        "--markdown",
        "ab.md",
        cwd=repo,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    data = json.loads((repo / "ab.json").read_text())
    assert data["cases"][0]["status"] == "ok", data["cases"][0]  # the real values reached each side's process
    assert data["base"]["environment"] == {"API_TOKEN": "***", "WORK_MODE": "plain"}
    assert data["head"]["environment"] == {"DB_PASSWORD": "***"}
    comment = (repo / "ab.md").read_text()
    for shown in (done.stdout + done.stderr, (repo / "ab.json").read_text(), comment):
        assert "hunter2" not in shown
        assert "pw-head" not in shown
    assert "API_TOKEN='***'" in done.stdout  # the user's values, quoted as data
    assert "WORK_MODE='plain'" in done.stdout
    assert "DB_PASSWORD='***'" in done.stdout
    masked = r"\*\*\*"  # markdown: the mask's stars escaped, so that they show as *** and emphasise nothing
    assert f"API_TOKEN='{masked}'" in comment
    assert f"DB_PASSWORD='{masked}'" in comment


QUOTES_ITS_TOKEN = """\
import os

if "API_TOKEN" in os.environ:  # the head side's import fails, quoting the secret
    raise ValueError("token is " + os.environ["API_TOKEN"])
REPEAT = 20
"""


def test_a_sides_error_that_quotes_a_masked_value_is_scrubbed_in_every_output(repo):
    (repo / "mypkg.py").write_text(QUOTES_ITS_TOKEN)
    done = ab("gate.yaml", "--head-env", "API_TOKEN=abc123secret", "-o", "ab.json", "--markdown", "ab.md", cwd=repo)
    data = json.loads((repo / "ab.json").read_text())
    (case,) = data["cases"]
    assert case["status"] == "error", case
    assert "token is ***" in case["reason"]
    for shown in (done.stdout + done.stderr, (repo / "ab.json").read_text(), (repo / "ab.md").read_text()):
        assert "abc123secret" not in shown


def test_an_empty_name_does_not_repeat_its_value(repo):
    done = ab("gate.yaml", "--base-env", "=hunter2", cwd=repo)
    assert done.returncode == 2
    assert "expected KEY=VALUE" in done.stderr
    assert "hunter2" not in done.stderr


@pytest.mark.parametrize(
    "args, said",
    [
        (("-o", "gate.yaml"), "gate.yaml: -o names the same file as CONFIG, an input of this command"),
        (("--markdown", "./gate.yaml"), "./gate.yaml: --markdown names the same file as CONFIG, an input of this command"),
        (("--head", ""), "--head is empty"),
        (("--head", " "), "--head is empty"),
        (("--base-python", ""), "--base-python is empty"),
    ],
)
def test_an_output_over_the_config_or_an_empty_option_is_refused_before_anything_runs(repo, args, said):
    before = (repo / "gate.yaml").read_text()
    done = ab("gate.yaml", "--base", "HEAD", *args, cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not done.stdout.strip()  # nothing was measured
    assert (repo / "gate.yaml").read_text() == before
    assert worktree_count(repo) == 0


@pytest.mark.parametrize(
    "value, said",
    [
        ("ab_margin=5", "--set 'ab_margin=5': write the margin with its %"),
        ("work.max_time_s=1,2", "--set 'work.max_time_s=1,2': a measurement setting takes one value"),
        ("min_samples=many", "--set 'min_samples=many': "),
    ],
)
def test_a_set_value_that_no_side_can_take_is_the_command_lines_fault_not_a_sides(repo, value, said):
    """--set sets both sides: a setting's value wrong in itself is refused once, before either side is checked out
    or planned, without naming a side (it read `error: the head side (da8427df4e (same)): --set 'ab_margin=5': ...`)."""
    done = ab("gate.yaml", "--base", "HEAD", "--head", "HEAD", "--set", value, cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"error: {said}" in done.stderr
    assert "side" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert worktree_count(repo) == 0


def test_a_w_file_missing_from_the_working_directory_is_the_command_lines_fault_not_a_sides(repo):
    """The trial: `ab bench/dl.yaml -w dlsteps.py:jax_step` from the repository's root (the file is bench/dlsteps.py)
    read `error: the head side (72c6af48ee (dlhead)): -w 'dlsteps.py:jax_step': no such file …`. A -w file is named
    from the working directory, as `run -w` names it; one that is not there is refused once, before either side is
    checked out or planned, without naming a side."""
    (repo / "sub").mkdir()
    done = ab("../gate.yaml", "-w", "work.py:work", "--base", "HEAD", "--head", "HEAD", cwd=repo / "sub")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"error: -w 'work.py:work': no such file {(repo / 'sub' / 'work.py').resolve()}" in done.stderr
    assert "named from the working directory" in done.stderr
    assert "side" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert worktree_count(repo) == 0


def test_a_backend_no_side_can_run_is_the_command_lines_fault_and_one_a_side_cannot_is_that_sides(repo):
    """The trial: `ab bench/gate.yaml --base mbase -b cupy` read `the head side (working tree): nothing to run …
    cupy runs on cuda only`, as if the head's tree were at fault, where -b asked for what neither side's config can
    run. Said without a side; where one side's own config is the cause (its devices), that side is still named."""
    done = ab("gate.yaml", "--base", "HEAD", "-b", "cupy", cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "error: -b cupy: nothing to run" in done.stderr
    assert "cupy runs on cuda only" in done.stderr
    assert "side" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    (repo / "gate.yaml").write_text(CONFIG.replace("devices: [cpu]", "devices: [cuda]"))  # the head's own config
    done = ab("gate.yaml", "--base", "HEAD", "-b", "numpy", cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "error: the head side (working tree): nothing to run" in done.stderr
    assert "numpy runs on cpu only" in done.stderr
