"""The package as a user installs it: what its wheel carries and declares, and a numpy run without torch.

The wheel is built once for the module (setuptools, as `pip wheel` builds it, without build isolation: no
download) from a copy of what the wheel is built from, so that a stale build/ in the checkout cannot add to it.
Without torch is made, not assumed: a sitecustomize on PYTHONPATH takes torch out of the interpreter's path
finder, so that it is not found at all, as on a machine where it was never installed.
"""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from asyncbench.spec import suites
from tests.support.cli import asyncbench

ROOT = Path(__file__).resolve().parents[1]
#: what the wheel is built from (pyproject.toml names the readme and the license file)
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "asyncbench")
#: the Python releases the package says it supports (pyproject.toml's classifiers and requires-python)
PYTHONS = ("3.10", "3.11", "3.12", "3.13")

HIDE_TORCH = '''\
"""torch is not installed: the path finder finds no torch (its import is ModuleNotFoundError, find_spec None)."""
import sys
from importlib.machinery import PathFinder


class _WithoutTorch(PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        return None if name.partition(".")[0] == "torch" else super().find_spec(name, path, target)


sys.meta_path[:] = [_WithoutTorch if finder is PathFinder else finder for finder in sys.meta_path]
'''


class Wheel:
    """A built wheel's files and its metadata, read once."""

    def __init__(self, path: Path):
        with zipfile.ZipFile(path) as archive:
            self.names = set(archive.namelist())
            info = next(n for n in self.names if n.endswith(".dist-info/METADATA"))
            self.dist_info = info.rsplit("/", 1)[0]
            self.metadata = email.parser.Parser().parsestr(archive.read(info).decode())
            self.entry_points = archive.read(f"{self.dist_info}/entry_points.txt").decode()

    def all(self, field: str) -> list[str]:
        return self.metadata.get_all(field) or []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Wheel:
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = out.glob("asyncbench-*.whl")
    return Wheel(path)


def test_the_wheel_carries_its_license_its_types_and_the_suites(wheel):
    assert f"{wheel.dist_info}/licenses/LICENSE" in wheel.names
    assert wheel.metadata["License-Expression"] == "MIT AND Apache-2.0"  # Apache: Otava's analysis (history/edivisive)
    assert f"{wheel.dist_info}/licenses/asyncbench/history/edivisive/LICENSE" in wheel.names
    assert f"{wheel.dist_info}/licenses/asyncbench/history/edivisive/NOTICE" in wheel.names
    assert "asyncbench/py.typed" in wheel.names
    shipped = {n.removeprefix("asyncbench/suites/") for n in wheel.names if n.startswith("asyncbench/suites/")}
    assert {"default.yaml", "async-computation.yaml", "ci-gate.yaml", "ab-gate.yaml"} <= shipped
    assert {f"{name}.yaml" for name in suites.names()} == shipped  # every suite `list` names is in the wheel


def test_torch_is_an_extra_of_the_wheel_never_a_requirement(wheel):
    requires = wheel.all("Requires-Dist")
    torch = [r for r in requires if r.split(";")[0].strip().startswith("torch")]
    assert torch, requires
    assert all("extra ==" in r for r in torch), torch
    assert "torch" in wheel.all("Provides-Extra")
    assert any(r.startswith("numpy") and "extra" not in r for r in requires), requires  # the core's own backend


def test_the_history_extra_needs_no_otava_and_no_pinned_numpy(wheel):
    history = [r.split(";")[0].strip() for r in wheel.all("Requires-Dist") if 'extra == "history"' in r]
    assert any(r.lower().startswith("sqlalchemy") for r in history), history
    assert not any("otava" in r.lower() for r in wheel.all("Requires-Dist"))
    assert not any(r.startswith("numpy==") for r in wheel.all("Requires-Dist"))


def test_the_wheel_says_what_it_runs_on(wheel):
    classifiers = wheel.all("Classifier")
    assert "Operating System :: POSIX :: Linux" in classifiers  # SIGSTOP, prctl, flock
    assert {f"Programming Language :: Python :: {v}" for v in PYTHONS} <= set(classifiers)
    assert "Typing :: Typed" in classifiers
    assert "Environment :: GPU :: NVIDIA CUDA" in classifiers
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    assert wheel.metadata["Requires-Python"] == ">=3.10"
    urls = dict(u.split(", ", 1) for u in wheel.all("Project-URL"))
    assert {"Repository", "Documentation", "Changelog"} <= set(urls), urls


def test_the_wheel_names_its_command_and_its_pytest_plugin(wheel):
    assert "asyncbench = asyncbench.console:main" in wheel.entry_points
    assert "[pytest11]\nasyncbench = asyncbench.pytest_plugin" in wheel.entry_points


def _without_torch(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    hide = tmp_path / "without-torch"
    hide.mkdir(exist_ok=True)
    (hide / "sitecustomize.py").write_text(HIDE_TORCH, encoding="utf-8")
    path = os.pathsep.join([str(hide), str(ROOT)])  # workers inherit it: none of them finds torch either
    ours = [k for k in os.environ if k.startswith("ASYNCBENCH_")]
    return asyncbench(*argv, cwd=tmp_path, env={"PYTHONPATH": path}, unset=ours, timeout=120)


def test_numpy_runs_a_suite_by_name_where_torch_is_not_installed(tmp_path):
    """The core needs no torch: a suite by name on numpy measures, and torch's cases are one line saying why not."""
    done = _without_torch(tmp_path, "run", "async-computation", "-w", "matmul", "-b", "numpy", "-b", "torch", "-d", "cpu", "--quick",
                          "--no-progress", "--set", "size=16", "--set", "n_iter=2")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "│ numpy " in done.stdout  # a measured row
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("torch:")]
    assert line == "torch: 1 case skipped — torch not installed (pip install 'asyncbench[torch]', or the torch build for your CUDA)"


def test_torch_alone_without_torch_is_one_line_saying_how_to_install_it(tmp_path):
    done = _without_torch(tmp_path, "run", "async-computation", "-b", "torch", "--quick", "--no-progress")
    assert done.returncode == 1, done.stdout + done.stderr  # nothing measured
    assert "Traceback" not in done.stdout + done.stderr
    skipped = [line for line in done.stdout.splitlines() if line.startswith("torch:")]
    assert skipped == ["torch: 4 cases skipped — torch not installed (pip install 'asyncbench[torch]', or the torch build for your CUDA)"]
    assert "nothing was measured: all 4 cases were skipped (torch not installed" in done.stdout  # why exit 1


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.get_overloads is new in Python 3.11")
def test_step_is_typed_for_a_users_type_checker():
    """py.typed makes mypy read asyncbench's annotations; `@step` then must say what it returns in both its forms
    (a bare decorator and a call), or `mypy --strict` on a user's steps says "untyped decorator" (a run of mypy itself
    takes ~15 s: its overloads are asserted here, `make wheel-check` runs mypy --strict on a typed step)."""
    import typing

    from asyncbench.workloads import step_form

    overloads = typing.get_overloads(step_form.step)
    assert len(overloads) == 2
    returns = {str(typing.get_type_hints(o)["return"]) for o in overloads}
    assert any("StepWorkload" in r and "Callable" not in r for r in returns), returns
    assert any("Callable" in r and "StepWorkload" in r for r in returns), returns
