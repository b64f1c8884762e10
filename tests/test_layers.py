"""The layer rules that import-linter cannot see: frameworks are imported lazily, only when a case runs.

import-linter (`make lint`) checks the static order of the folders. What it
cannot check is laziness: backends import torch, jax, cupy and mxnet inside
functions. These tests run the commands in a fresh interpreter and look at
`sys.modules` afterwards: --help, list, validate, show and compare, and
loading every shipped config and the built-in suite, import no framework
and no module of the user's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import quick_numpy_results

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = ("torch", "cupy", "jax", "mxnet")

#: runs the CLI in-process, then prints the frameworks and user modules that got imported
PROBE = """
import json, sys
from asyncbench.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {frameworks!r} or m.startswith("mine"))
print("LOADED=" + json.dumps(loaded))
"""


def _loaded_by(*argv: str, cwd: Path = ROOT) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(frameworks=FRAMEWORKS), *argv], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    line = next(line for line in done.stdout.splitlines() if line.startswith("LOADED="))
    return json.loads(line.removeprefix("LOADED="))


@pytest.fixture(scope="module")
def results_file(tmp_path_factory) -> Path:
    """A small real results file (written in another process: this test's probes start clean)."""
    return quick_numpy_results(tmp_path_factory.mktemp("layers") / "r.json")


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["ab", "--help"], ["list"], ["list", "--format", "json"], ["schema"]])
def test_help_and_list_import_no_framework(argv):
    assert _loaded_by(*argv) == []


def test_validating_every_shipped_config_imports_no_framework():
    configs = sorted(str(p) for p in (ROOT / "configs").glob("*.yaml"))
    assert configs
    assert _loaded_by("validate", *configs) == []


def test_show_and_compare_import_no_framework(results_file):
    assert _loaded_by("show", str(results_file)) == []
    assert _loaded_by("show", str(results_file), "--format", "markdown") == []
    assert _loaded_by("compare", str(results_file), str(results_file)) == []


def test_loading_the_built_in_suite_imports_no_framework():
    script = (
        "import sys; from asyncbench.spec import config; config.default_suite(); "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_showing_a_user_workloads_results_imports_no_user_module(tmp_path, results_file):
    """A results file names its workload; rendering it must not import that module (it may be gone, or slow)."""
    raw = json.loads(results_file.read_text())
    for result in raw["results"]:
        result["workload"] = str(tmp_path / "mine.py") + ":Mine"
    (tmp_path / "mine.py").write_text("raise SystemExit('imported!')\n")
    moved = tmp_path / "r.json"
    moved.write_text(json.dumps(raw))
    assert _loaded_by("show", str(moved), cwd=tmp_path) == []


def test_showing_a_steps_results_rebuilds_its_readings_importing_no_framework_or_user_module(tmp_path):
    """A step's readings are made again from the file's figures by the step form's rule (issue 53): neither the
    step's module nor a framework is imported to do it, and the file's own words are not shown."""
    (tmp_path / "mine_step.py").write_text(
        "import asyncbench\n\n\n@asyncbench.step\ndef tiny(backend, device, params):\n"
        '    x = backend.ones((8, 8), "float32", device)\n    return lambda: x @ x\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "asyncbench", "run", "-w", "mine_step.py:tiny", "-b", "numpy", "--quick", "--no-progress", "-o", "r.json"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    raw = json.loads((tmp_path / "r.json").read_text())
    assert raw["results"][0]["reading"]
    raw["results"][0]["reading"] = "the step is 10x faster than before"
    (tmp_path / "r.json").write_text(json.dumps(raw))
    (tmp_path / "mine_step.py").write_text("raise SystemExit('imported!')\n")
    assert _loaded_by("show", str(tmp_path / "r.json"), cwd=tmp_path) == []
    shown = subprocess.run(
        [sys.executable, "-m", "asyncbench", "show", "r.json"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert "10x faster" not in shown.stdout
    assert "the loop" in shown.stdout
