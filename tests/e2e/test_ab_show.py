"""`asyncbench show ab.json`: an `ab -o` file rendered again as `ab` printed it (its table, its pull-request comment,
its JSON), importing no framework and no module of the user's; every hostile `ab` file refused in one line."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from asyncbench.report import paired as views
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.new_syncs import NewSync
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.results.syncs import SyncKind, SyncPoint
from asyncbench.verdicts.paired import judge
from tests.support.cli import ROOT, asyncbench, cli_env, in_process

HOSTILE = ROOT / "tests" / "hostile" / "cases"
FACTS = {"cpu_affinity": 2, "thread_variables": {"OMP_NUM_THREADS": "1"}, "git_sha": "0123456789abcdef0123" + "0" * 20 + "-dirty"}
POINT = SyncPoint("bench/steps.py", 42, SyncKind.CONVERSION, "jax.Array.item", 1.0, 3e-5, (2.7e-5, 4.3e-5), None, (1.0,) * 6, (3e-5,) * 6)


def _report() -> ABReport:
    """A report as `ab` makes one: a SLOWER jax case with a sync point new on head, a case at its own margin, a
    case on one side only, a working-tree head."""
    base = Side("base", "a1b2c3d4e5 (main)", "/usr/bin/python3", "3.11.7", {"OMP_NUM_THREADS": "1"}, facts=FACTS)
    head = Side("head", "working tree", "/usr/bin/python3", "3.11.7", facts=FACTS)
    # no blocks kept: a reader holds a ratio and its interval to the blocks beside them (results.paired)
    slower = PairedRatio("sync_every=0", "variant", "s", 1e-3, 1.2e-3, 1.2, (1.15, 1.26), Label.SLOWER)
    same = dataclasses.replace(slower, name="step", ratio=1.01, ratio_ci=(0.98, 1.04), label=Label.SAME, head=1.01e-3)
    cases = (
        PairedCase(
            "work[jax,cpu]",
            "ok",
            None,
            (slower,),
            120,
            30.5,
            0.995,
            None,
            12,
            workload="/x/steps.py:work",
            backend="jax",
            device="cpu",
            params={"n": 64},
            new_syncs=(NewSync("sync_every=0", POINT),),
            margin=0.05,
        ),
        PairedCase("own[numpy,cpu]", "ok", None, (same,), 80, 20.0, 0.995, None, 10, needed_s=41.0, margin=0.25),
        PairedCase("gone[numpy,cpu]", "one-sided", "only on base"),
    )
    return ABReport("2026-01-01T00:00:00+00:00", "0.1.0", base, head, 0.05, 0.01, False, "frozen", cases, run_id="ab12" * 8)


@pytest.fixture
def ab_json(tmp_path: Path) -> Path:
    path = tmp_path / "ab.json"
    path.write_text(_report().to_json())
    return path


def test_show_renders_an_ab_file_as_ab_printed_it(ab_json: Path) -> None:
    report = _report()
    done = asyncbench("show", str(ab_json), cwd=ab_json.parent)
    assert done.returncode == 0, done.stderr
    for shown in ("work[jax,cpu]", "SLOWER", "own[numpy,cpu]", "bench/steps.py:42", "the gate failed (ab exits 1) because:"):
        assert shown in done.stdout, done.stdout
    assert "working tree at 0123456789 with uncommitted changes" in done.stdout
    markdown = asyncbench("show", str(ab_json), "--format", "markdown", cwd=ab_json.parent)
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout == views.markdown(views.build(report, judge(report)))  # what `ab --markdown` wrote
    again = asyncbench("show", str(ab_json), "--format", "json", cwd=ab_json.parent)
    assert again.returncode == 0, again.stderr
    assert again.stdout == report.to_json()  # read back whole: nothing lost, nothing added


def test_an_interrupted_ab_file_says_so_and_fails_as_a_gate(tmp_path: Path) -> None:
    report = dataclasses.replace(_report(), interrupted=True, cases=_report().cases[1:2])
    (tmp_path / "ab.json").write_text(report.to_json())
    done = asyncbench("show", "ab.json", "--format", "markdown", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "(interrupted)" in done.stdout
    assert "❌ the gate fails" in done.stdout
    assert "interrupted: the gate did not finish" in done.stdout


def test_a_shown_ab_file_says_why_its_gate_fails_and_words_the_exit_as_ab_s(tmp_path: Path) -> None:
    """A CI engineer's `show` of an interrupted file printed "the gate fails (exit 1): 1 SAME" and exited 0; of one with
    no cases, "the gate fails (exit 1): nothing compared", exit 0: show's own exit contradicted by its words."""
    interrupted = dataclasses.replace(_report(), interrupted=True, cases=_report().cases[1:2])
    (tmp_path / "ab.json").write_text(interrupted.to_json())
    done = asyncbench("show", "ab.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the gate fails (interrupted before every case finished): " in done.stdout
    assert "(exit 1)" not in done.stdout
    empty = dataclasses.replace(_report(), cases=())
    (tmp_path / "empty.json").write_text(empty.to_json())
    done = asyncbench("show", "empty.json", cwd=tmp_path)
    # a file that holds no case compared nothing: `show` exits 1 itself, as for a run's file that measured nothing
    assert done.returncode == 1, done.stderr
    assert done.stderr == "nothing was compared: empty.json holds no case (its run finished no case)\n"
    assert "the gate fails (ab exits 1): nothing compared" in done.stdout
    assert "the gate failed (ab exits 1) because:" in done.stdout
    markdown = asyncbench("show", "empty.json", "--format", "markdown", cwd=tmp_path)
    assert "**❌ the gate fails (ab exits 1)**: nothing compared" in markdown.stdout


PROBE = """
import json, sys
from asyncbench.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print("LOADED=" + json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "jax", "cupy", "mxnet", "numpy", "steps"))))
"""


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_showing_an_ab_file_imports_no_framework_and_no_user_module(ab_json: Path, fmt: str) -> None:
    (ab_json.parent / "steps.py").write_text("raise SystemExit('imported!')\n")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "show", str(ab_json), "--format", fmt],
        cwd=ab_json.parent,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("LOADED=")]
    assert json.loads(line.removeprefix("LOADED=")) == []


@pytest.mark.parametrize("args, message", [(["--format", "csv"], "--format csv"), (["--plot", "p.png"], "--plot")])
def test_what_an_ab_file_cannot_be_shown_as_is_one_line_and_exit_2(ab_json: Path, args: list[str], message: str) -> None:
    done = asyncbench("show", str(ab_json), *args, cwd=ab_json.parent)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""
    assert not (ab_json.parent / "p.png").exists()


def _new_syncs_edited(edit) -> dict:
    raw = json.loads(_report().to_json())
    edit(raw["cases"][0]["new_syncs"])
    return raw


HOSTILE_NEW_SYNCS = {
    "file-escape": (lambda n: n[0]["point"].update(file="a.py\x1b]8;;http://x\x07"), "new_syncs[0].point.file"),
    "line-negative": (lambda n: n[0]["point"].update(line=-1), "new_syncs[0].point.line"),
    "kind-script": (lambda n: n[0]["point"].update(kind="<script>"), "new_syncs[0].point.kind"),
    "call-newline": (lambda n: n[0]["point"].update(call="x\nasyncbench: all good"), "new_syncs[0].point.call"),
    "wait-negative": (lambda n: n[0]["point"].update(wait_s_per_step=-1.0), "new_syncs[0].point.wait_s_per_step"),
    "variant-number": (lambda n: n[0].update(variant=3), "new_syncs[0].variant"),
    "not-a-list": (lambda n: n.clear() or n.append("x"), "new_syncs[0]"),
}


@pytest.mark.parametrize("name", HOSTILE_NEW_SYNCS)
def test_a_hostile_sync_point_new_on_head_is_refused_in_one_line(tmp_path: Path, name: str) -> None:
    edit, key = HOSTILE_NEW_SYNCS[name]
    (tmp_path / "ab.json").write_text(json.dumps(_new_syncs_edited(edit)))
    done = in_process("show", "ab.json", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert key in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("path", sorted((HOSTILE / "ab").glob("*.json")), ids=lambda p: p.stem)
def test_every_hostile_ab_file_is_refused_by_show_in_one_line(path: Path, tmp_path: Path) -> None:
    """In this process (cli.in_process: the same command, exit status and streams): sixty refusals would otherwise
    pay sixty interpreters' starts, 30 s of the suite's CPU."""
    done = in_process("show", str(path), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
