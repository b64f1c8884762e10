"""Loading a user's workload from a `FILE:NAME` reference: what a wrong NAME is told."""

from __future__ import annotations

import pytest

from asyncbench.errors import InputError
from asyncbench.workloads import plugins

STEPS = """\
import numpy as np
from numpy import ones


def train(backend, device, params):
    return lambda: ones(3)


def evaluate(backend, device, params=None):
    return lambda: np.zeros(3)


def helper():
    return np.zeros(3)
"""


def _error(tmp_path, name: str) -> str:
    (tmp_path / "steps.py").write_text(STEPS)
    with pytest.raises(InputError) as raised:
        plugins.load(plugins.canonical(f"steps.py:{name}", tmp_path))
    return str(raised.value)


def test_a_misspelled_step_function_is_told_the_step_it_is_close_to(tmp_path):
    assert _error(tmp_path, "trian").endswith("has no 'trian' (did you mean 'train'?)")


def test_a_name_close_to_nothing_is_told_the_steps_the_file_defines_not_what_it_imports(tmp_path):
    said = _error(tmp_path, "zzz")
    assert said.endswith("has no 'zzz'; it has train, evaluate")  # not numpy's ones, nor helper(), which takes no step's arguments


def test_a_package_the_step_file_imports_but_this_python_lacks_is_told_how_to_install_it(tmp_path):
    """The CI guide's layout before `pip install -e .`: `validate` and `run` import the step file as Python would, and
    the line names the missing package and the install that provides it, not only Python's ModuleNotFoundError."""
    (tmp_path / "steps.py").write_text("import mypkg_not_installed.model\n\n\ndef train(backend):\n    return lambda: None\n")
    with pytest.raises(InputError) as raised:
        plugins.load(plugins.canonical("steps.py:train", tmp_path))
    said = str(raised.value)
    assert "No module named 'mypkg_not_installed'" in said
    fix = "install the package that provides 'mypkg_not_installed' in this Python (your own: `pip install -e .` at its root)"
    assert said.endswith(fix)
