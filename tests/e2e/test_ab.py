"""`asyncbench ab`: two sides from git revisions, paired round by round; bad input refused before anything runs.

The end-to-end tests make a real git repository with a user's package and a
workload that imports it, commit a base, change the package for the head,
and run the real CLI on real numpy work.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from asyncbench.engine import isolation, side_process
from tests.support.ab_repo import CONFIG, ONE_BLAS_THREAD, ab, git
from tests.support.cli import INTERRUPTIBLE_ASYNCBENCH


def test_a_planted_slowdown_in_the_users_package_is_slower_and_fails_the_gate(repo):
    (repo / "mypkg.py").write_text("REPEAT = 40\n")  # the head does twice the work
    done = ab("gate.yaml", "--base", "HEAD", "-o", "ab.json", "--markdown", "comment.md", cwd=repo)
    assert done.returncode == 1, done.stderr + done.stdout
    data = json.loads((repo / "ab.json").read_text())
    (case,) = data["cases"]
    (ratio,) = case["ratios"]
    assert ratio["label"] == "SLOWER"
    assert ratio["verdict"] == "fail"
    assert ratio["ratio_ci"][0] > 1.05
    assert 1.6 < ratio["ratio"] < 2.5
    assert data["base"]["revision"].endswith("(HEAD)")
    assert data["head"]["revision"] == "working tree"
    comment = (repo / "comment.md").read_text()
    assert "SLOWER" in comment
    assert "the gate fails" in comment
    assert git(repo, "worktree", "list").count("\n") == 0  # the base's temporary worktree is gone


def test_a_case_s_ab_margin_is_the_base_side_s_so_a_pull_request_cannot_loosen_its_own_gate(repo):
    """The head doubles the work and its config allows 300%: still SLOWER at the base's 5%. Once the base's
    config allows 300%, the same doubling passes, and the row says which margin judged it."""
    (repo / "mypkg.py").write_text("REPEAT = 40\n")
    (repo / "gate.yaml").write_text(CONFIG + "    ab_margin: 300%\n")
    loosened = ab("gate.yaml", "--base", "HEAD", "-o", "ab.json", cwd=repo)
    assert loosened.returncode == 1, loosened.stdout + loosened.stderr
    (case,) = json.loads((repo / "ab.json").read_text())["cases"]
    assert case["margin"] == pytest.approx(0.05)
    assert case["ratios"][0]["label"] == "SLOWER"
    assert "head's config states ab_margin 300%; it is judged at 5%, the base side's" in loosened.stderr + loosened.stdout
    git(repo, "commit", "-qm", "the case resolves 300%", "--", "gate.yaml")  # the base now allows it; REPEAT stays 20
    allowed = ab("gate.yaml", "--base", "HEAD", "-o", "ab.json", cwd=repo)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    (case,) = json.loads((repo / "ab.json").read_text())["cases"]
    assert case["margin"] == pytest.approx(3.0)
    assert case["ratios"][0]["label"] in ("SAME", "NOT SLOWER")
    assert "judged at a margin of its own, 300%" in allowed.stdout


def test_environment_differences_reach_only_their_side(repo):
    """--base-env sets a variable the user's package reads: the base then does half the work of the head."""
    (repo / "mypkg.py").write_text("import os\nREPEAT = int(os.environ.get('WORK_REPEAT', '20'))\n")
    done = ab("gate.yaml", "--base-env", "WORK_REPEAT=10", "--base-env", "OMP_NUM_THREADS=1", "-o", "ab.json", cwd=repo)
    data = json.loads((repo / "ab.json").read_text())
    (ratio,) = data["cases"][0]["ratios"]
    assert ratio["label"] == "SLOWER", done.stdout
    assert data["base"]["environment"] == {"WORK_REPEAT": "10", "OMP_NUM_THREADS": "1"}
    assert data["head"]["environment"] == {}
    assert "WORK_REPEAT='10'" in done.stdout  # the user's value, quoted as data
    # each side's facts are captured by its own worker: the thread variable shows on the base side only
    assert data["base"]["facts"]["thread_variables"]["OMP_NUM_THREADS"] == "1"
    assert "OMP_NUM_THREADS" not in data["head"]["facts"]["thread_variables"]
    assert "sides differ: thread_variables.OMP_NUM_THREADS: '1' → None" in done.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "ab needs a base"),
        (("--base-env", "NOEQUALS"), "expected KEY=VALUE"),
        (("--base", "no-such-revision"), "no such revision"),
        (("--base-python", "/nonexistent/python"), "--base-python /nonexistent/python"),
        (("--base-python", "/bin/false"), "cannot import asyncbench's pairing worker"),
        (("--max-regression", "ten"), "--max-regression"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_anything_runs(repo, args, message):
    done = ab("gate.yaml", *args, cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_config_absent_in_the_base_revision_and_a_directory_outside_git_are_refused(repo, tmp_path_factory):
    (repo / "new.yaml").write_text(CONFIG)
    done = ab("new.yaml", "--base", "HEAD", cwd=repo)
    assert done.returncode == 2
    assert "new.yaml does not exist in base" in done.stderr
    outside = tmp_path_factory.mktemp("outside")
    (outside / "gate.yaml").write_text(CONFIG)
    done = ab("gate.yaml", "--base", "HEAD", cwd=outside)
    assert done.returncode == 2
    assert "not in a git repository" in done.stderr


def _state(pid: int) -> str:
    """The process state letter from /proc: R running, S sleeping, T stopped."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_the_idle_side_is_frozen_between_its_samples_and_continued_for_a_call():
    side = side_process.SideWorker("base", None, sys.executable, {})
    try:
        assert side.call("teardown", None, 60.0) is None  # starts the worker; a call leaves it paused
        pid = side.worker._process.pid
        deadline = time.monotonic() + 5
        while _state(pid) != "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(pid) == "T"
        assert side.call("teardown", None, 60.0) is None  # resumed for the call
    finally:
        side.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)  # closing a paused worker still ends it


def test_a_worker_call_resumes_a_paused_worker():
    worker = isolation.Worker(side_process.serve, sys.executable, {})
    try:
        worker.call(("teardown", None), 60.0)
        worker.pause()
        assert worker.call(("teardown", None), 60.0) is None
    finally:
        worker.close()


def test_ctrl_c_keeps_what_finished_removes_the_worktree_and_leaves_no_worker(repo):
    import psutil

    (repo / "gate.yaml").write_text(
        CONFIG.replace("min_samples: 6, max_time_s: 3", "min_samples: 100000, max_samples: 100000, max_time_s: 120")
    )
    git(repo, "commit", "-qam", "a long case")
    process = subprocess.Popen(
        [*INTERRUPTIBLE_ASYNCBENCH, "ab", "gate.yaml", "--base", "HEAD", "--no-progress", "-o", "ab.json"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **ONE_BLAS_THREAD},
    )
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + 60
    while len(parent.children(recursive=True)) < 2 and time.monotonic() < deadline:  # both sides' workers are up
        time.sleep(0.2)
    workers = parent.children(recursive=True)
    time.sleep(2)  # measuring
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=60)
    finally:  # a hung ab must not stay this process's child: every later test that counts children would fail
        if process.poll() is None:
            for left in [*parent.children(recursive=True), parent]:
                left.kill()
    assert process.returncode == 130, out + err
    data = json.loads((repo / "ab.json").read_text())
    assert data["interrupted"] is True
    # the reason is the interrupt, with the code it exits with, not what a finished gate would conclude from it
    assert "exit 130 because:" in out + err
    assert "interrupted (exit 130)" in out + err
    assert "nothing was compared" not in out + err
    assert git(repo, "worktree", "list").count("\n") == 0
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive


def test_the_base_side_runs_under_the_python_it_is_given(repo, tmp_path_factory):
    """Another interpreter (here the same one behind another name) runs the base side: probed, then used.

    A launcher script, not a symlink: a virtual environment's interpreter linked from outside its folder no longer
    finds its pyvenv.cfg, and so none of the environment's packages (asyncbench among them)."""
    other = tmp_path_factory.mktemp("env") / "python-base"
    other.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    other.chmod(0o755)
    # the shortest gate: what is asserted is which python ran each side, not a verdict on identical sides
    done = ab(
        "gate.yaml",
        "--base-python",
        str(other),
        "-o",
        "ab.json",
        "--allow-inconclusive",
        "--gate-time",
        "10s",
        "--gate-time-max",
        "10s",
        cwd=repo,
    )
    assert done.returncode in (0, 1), done.stderr
    data = json.loads((repo / "ab.json").read_text())
    assert data["base"]["python"] == str(other)
    assert data["head"]["python"] == sys.executable
    assert data["base"]["facts"]["python"] == data["head"]["facts"]["python"]
    (ratio,) = data["cases"][0]["ratios"]
    assert ratio["label"] != "SLOWER"  # the same code on both sides


SLEEPING_STEP = """
import time

import asyncbench

PAUSE_S = {pause_s}


@asyncbench.step(sync_every=(0,), steps=1)
def nap(backend, device, params):
    return lambda: time.sleep(PAUSE_S)
"""


def test_a_w_file_is_read_from_each_sides_own_revision(tmp_path):
    """`ab -w file.py:Name --base REV`: each side imports the file as its own revision has it. The base sleeps 1 ms
    a step, the head 6 ms: SLOWER by far more than any load could fake (a sleep's time is not shared CPU), and each
    side records its own revision."""
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "nap.py").write_text(SLEEPING_STEP.format(pause_s=0.001))
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base: 1 ms")
    base_sha = git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "bench" / "nap.py").write_text(SLEEPING_STEP.format(pause_s=0.006))
    git(tmp_path, "commit", "-qam", "head: 6 ms")
    head_sha = git(tmp_path, "rev-parse", "HEAD")
    args = ("-w", "nap.py:nap", "-b", "numpy", "-d", "cpu", "--set", "max_time_s=3", "--set", "min_samples=6", "--set", "warmup=1")
    done = ab(*args, "--base", "HEAD~1", "-o", "ab.json", cwd=tmp_path / "bench")  # the file relative to the working directory
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads((tmp_path / "bench" / "ab.json").read_text())
    (case,) = data["cases"]
    (ratio,) = case["ratios"]
    assert ratio["label"] == "SLOWER", done.stdout
    assert ratio["ratio"] > 2.5  # 6×, less the harness's own time per sample
    assert data["base"]["facts"]["git_sha"] == base_sha
    assert data["head"]["facts"]["git_sha"] == head_sha


def test_a_w_file_missing_in_the_base_or_outside_the_repository_is_refused(repo, tmp_path_factory):
    (repo / "new_bench.py").write_text(SLEEPING_STEP.format(pause_s=0.001))
    done = ab("-w", "new_bench.py:nap", "-b", "numpy", "--base", "HEAD", cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "new_bench.py does not exist in base" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    outside = tmp_path_factory.mktemp("outside") / "elsewhere.py"
    outside.write_text(SLEEPING_STEP.format(pause_s=0.001))
    done = ab("-w", f"{outside}:nap", "-b", "numpy", "--base", "HEAD", cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not in a git repository: --base and --head name revisions of the -w file's repository" in done.stderr
    done = ab("gate.yaml", "-w", f"{outside}:nap", "--base", "HEAD", cwd=repo)  # the config's repository, not the file's
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is outside the repository" in done.stderr
    assert "both sides would run the same code" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_gate_time_too_short_for_a_first_interval_is_refused_with_why():
    """A new user's --gate-time 5s was taken, and every case ended INCONCLUSIVE without an interval: the first look
    needs at least 7 blocks of fresh processes (its looks while blocks go on start at 10), each sampled at least 0.5 s."""
    from asyncbench.errors import InputError
    from asyncbench.session import requests as ab

    with pytest.raises(InputError, match=r"its interval needs at least 7 blocks of fresh processes, each sampled at least 0\.5 s"):
        ab.parse_gate_time("5s")
    # the CI guide states the same rule (it said 7 where this error said 10)
    guide = " ".join((Path(__file__).parents[2] / "docs" / "guides" / "ci.md").read_text(encoding="utf-8").split())
    assert "needs at least 7 blocks of fresh processes" in guide
    assert "The looks scheduled while blocks go on start at 10 blocks" in guide
    assert ab.parse_gate_time("10s") == 10.0
    assert ab.parse_gate_time("2m") == 120.0


def test_a_case_on_one_side_only_says_what_it_ran_and_nothing_compared_fails(repo):
    """A case whose params differ between the sides is on one side only: each row still states its workload and
    params (so that `record` keeps them), and a gate that compared nothing exits 1."""
    one = "defaults: {{backends: [numpy], devices: [cpu]}}\nexperiments:\n  - {{name: mm, workload: matmul, params: {{size: {size}}}}}\n"
    (repo / "sizes.yaml").write_text(one.format(size=64))
    git(repo, "add", "sizes.yaml")
    git(repo, "commit", "-qm", "a gate of 64² products")
    (repo / "sizes.yaml").write_text(one.format(size=96))  # the head's working tree asks for another size
    done = ab("sizes.yaml", "--base", "HEAD", "-o", "ab.json", cwd=repo)
    assert done.returncode == 1, done.stderr
    cases = {case["reason"]: case for case in json.loads((repo / "ab.json").read_text())["cases"]}
    assert set(cases) == {"only on base", "only on head"}
    assert cases["only on base"]["status"] == "one-sided"
    assert (cases["only on base"]["workload"], cases["only on base"]["params"]["size"]) == ("matmul", 64)
    assert (cases["only on head"]["workload"], cases["only on head"]["params"]["size"]) == ("matmul", 96)


def test_quick_never_raises_a_param_the_config_set(repo):
    """`ab gate.yaml --quick` plans its cases as `run` does: a config's size of 64 and n_iter of 2, each below its
    quick value (256, 3), are kept on both sides (a config's n_ops of 100 ran at the quick 1000)."""
    small = "defaults: {backends: [numpy], devices: [cpu]}\nexperiments:\n  - {name: mm, workload: matmul, params: {size: 64, n_iter: 2}}\n"
    (repo / "small.yaml").write_text(small)
    git(repo, "add", "small.yaml")
    git(repo, "commit", "-qm", "a gate of small products")
    gate = ("--gate-time", "10s", "--gate-time-max", "10s", "--allow-inconclusive")
    done = ab("small.yaml", "--base", "HEAD", "--quick", *gate, "-o", "ab.json", cwd=repo)
    assert done.returncode in (0, 1), done.stderr
    (case,) = json.loads((repo / "ab.json").read_text())["cases"]
    assert case["status"] == "ok", case
    assert (case["params"]["size"], case["params"]["n_iter"]) == (64, 2)


def test_a_base_missing_from_a_shallow_clone_says_the_clone_is_shallow(repo, tmp_path_factory):
    """CI's checkout holds one commit unless told otherwise: `--base HEAD~` is then "no such revision", and the line
    says why and what fetches it."""
    git(repo, "commit", "-qm", "second", "--allow-empty")
    clone = tmp_path_factory.mktemp("shallow") / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)], check=True, capture_output=True)
    done = ab("gate.yaml", "--base", "HEAD~", cwd=clone)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no such revision" in done.stderr
    assert "the clone is shallow" in done.stderr
    assert "fetch-depth: 0" in done.stderr
