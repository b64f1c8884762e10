"""asyncbench from Python (session/python_face.py, which the package top forwards to): `load` a results or `ab`
file as its typed report, a table in a notebook (`_repr_html_`), every name escaped; a bad file is one InputError
line; `run` a step function and get its report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import asyncbench
from asyncbench.errors import InputError
from asyncbench.results.ab_report import ABReport
from asyncbench.results.model import Status, Verdict
from asyncbench.results.schema import Report

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "hostile" / "cases"
HOSTILE = "<script>alert(1)</script>"


def tiny_step(backend, device, params):
    x = backend.ones((8, 8), "float32", device)
    return lambda: x @ x


def test_load_reads_a_results_file_as_its_report_and_shows_its_table():
    report = asyncbench.load(CASES / "good" / "results.json")
    assert isinstance(report, Report)
    assert [r.id for r in report.results] == ["matmul[numpy,cpu,size=256,n_iter=3]"]
    shown = report._repr_html_()
    # the case's table (its clocks' medians with their intervals) and its check's verdict, as `show` words them
    assert "<table>" in shown
    assert "<th" in shown
    assert "2.13 ms [2.09–2.14]" in shown
    assert "pass <code>done_s.median &lt; 10ms</code>" in shown


def test_load_reads_an_ab_file_as_its_ab_report_and_shows_its_verdicts():
    compared = asyncbench.load(CASES / "good" / "ab.json")
    assert isinstance(compared, ABReport)
    shown = compared._repr_html_()
    assert "<td" in shown
    assert "+30.0%" in shown
    assert "<b>SLOWER</b>" in shown
    assert "the gate fails (ab exits 1)" in shown


def _with_hostile_name(kind: str, path: Path) -> Path:
    raw = json.loads((CASES / "good" / f"{kind}.json").read_text())
    case = (raw["results"] if kind == "results" else raw["cases"])[0]
    case["id"] = case["id"].replace("matmul", HOSTILE)
    if kind == "results":
        case["experiment"] = HOSTILE
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.parametrize("kind", ["results", "ab"])
def test_the_table_escapes_a_hostile_case_name(tmp_path, kind):
    shown = asyncbench.load(_with_hostile_name(kind, tmp_path / "hostile.json"))._repr_html_()
    assert "<script" not in shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in shown


@pytest.mark.parametrize(
    "content",
    ['{"schema_version": 5, "tool": ', "[1, 2]", '{"base": {}, "head": [], "cases": [], "max_regression": 0.05}'],
    ids=["truncated", "not-an-object", "ab-with-a-list-for-its-head"],
)
def test_a_bad_file_is_one_input_error_line_naming_it(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputError) as raised:
        asyncbench.load(path)
    said = str(raised.value)
    assert "\n" not in said
    assert said.startswith(str(path))


def test_run_of_a_step_function_returns_its_report():
    report = asyncbench.run(tiny_step, backend="numpy", params={"steps": 5}, max_time_s=0.2, expect=["done_s < 10s"])
    assert isinstance(report, Report)
    (result,) = report.results
    assert result.status == Status.OK
    assert result.backend == "numpy"
    assert list(result.variants) == ["sync_every=0", "sync_every=4", "sync_every=1"]  # the step form's barrier experiment
    assert result.sampling is not None
    assert result.sampling.max_time_s == 0.2
    assert [c.verdict for c in result.checks] == [Verdict.PASS]
    assert "sync_every=4" in report._repr_html_()


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"params": {"batch": 3}}, "tiny_step has no parameter 'batch'"),
        ({"expect": ["done_s =< 1ms"]}, "expect: malformed check"),
        ({"backend": "numpi"}, "backend='numpi': unknown backend"),
        ({"max_time_s": -1}, "max_time_s=-1"),
        ({"params": {"steps": 2}}, "params: sync_every 4 is above steps 2"),  # a wait that never comes in a sample
    ],
)
def test_run_refuses_a_wrong_option_in_one_line_before_anything_runs(options, said):
    with pytest.raises(InputError) as raised:
        asyncbench.run(tiny_step, **{"backend": "numpy", **options})
    assert said in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_function_cannot_be_sent_to_a_worker_process():
    with pytest.raises(InputError, match="name it"):
        asyncbench.run(tiny_step, backend="numpy", in_process=False)


def test_the_package_top_forwards_load_and_run_and_imports_no_framework():
    script = (
        "import sys, asyncbench; asyncbench.load, asyncbench.run; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'jax', 'numpy', 'scipy')))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
