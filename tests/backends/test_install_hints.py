"""What `devices` (and a skipped case) says of a framework that cannot run here: how to install it, and the numpy
MXNet truly needs. A new user read `jax not installed` with no command beside cupy's, and `it needs numpy < 2` where
the Makefile pins numpy < 1.24 (`import mxnet` uses np.bool, removed in numpy 1.24)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from asyncbench.backends import jax_backend, mxnet_backend

ROOT = Path(__file__).resolve().parents[2]


def test_the_jax_row_says_how_to_install_it_as_the_readme_does(monkeypatch: pytest.MonkeyPatch) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None if name == "jax" else found(name, *a, **k))
    reason = jax_backend.JaxBackend().unavailable_reason() or ""
    assert reason.startswith("jax not installed (pip install 'asyncbench[jax]'")
    assert 'jax = ["jax' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # the extra it names exists


def test_the_mxnet_row_says_the_numpy_the_makefile_pins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(mxnet_backend.PYTHON_VARIABLE, str(tmp_path / "no-python"))
    reason = mxnet_backend.MxnetBackend().unavailable_reason() or ""
    (pin,) = re.findall(r'^MXNET_SPEC \?=.*"numpy<([0-9.]+)"', (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert f"it needs numpy < {pin}" in reason
    assert f"needs numpy < {pin}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_mxnet_row_names_the_python_it_runs_by_its_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`devices` said `mxnet 1.9.1 in .venv-mxnet` with ASYNCBENCH_MXNET_PYTHON naming /work/main/.venv-mxnet/bin/python
    (any environment of that name looked alike): the row names the Python used, as the variable gives it."""
    python = tmp_path / ".venv-mxnet" / "bin" / "python"
    monkeypatch.setenv(mxnet_backend.PYTHON_VARIABLE, str(python))
    (cpu, _cuda) = mxnet_backend.MxnetBackend().probe()
    assert f" in {python}, threaded engine" in cpu.detail
