"""Loading a user's workload from a `FILE:NAME` reference: what a wrong NAME is told."""

from __future__ import annotations

import importlib.util
import sys

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


MXNET_AT_THE_TOP = """\
import mxnet as mx
from mxnet import gluon
import mxnet.ndarray as nd

import asyncbench


@asyncbench.step
def loop(backend, device, params):
    x = mx.nd.ones((4, 4))
    return lambda: nd.dot(x, x)
"""


def test_a_step_file_that_imports_mxnet_at_its_top_loads_here_and_its_step_is_mxnets(tmp_path):
    """MXNet runs in its own environment (numpy < 1.24), never in this Python: a step file written as MXNet code,
    `import mxnet as mx` at its top, is still read here to plan its cases (its step's code runs in mxnet's worker,
    which imports the file again with mxnet). Its step is MXNet's, and no mxnet is left imported here."""
    if importlib.util.find_spec("mxnet") is not None:
        pytest.skip("mxnet is importable in this Python: the file imports the real one")
    (tmp_path / "mxsteps.py").write_text(MXNET_AT_THE_TOP)
    workload = plugins.load(plugins.canonical("mxsteps.py:loop", tmp_path))
    assert workload.named_backends() == frozenset({"mxnet"})  # planned on mxnet only, its other rows skipped with why
    assert not [name for name in sys.modules if name == "mxnet" or name.startswith("mxnet.")]
    with pytest.raises(AttributeError, match=r"mxnet\.nd: mxnet is not imported in this Python .*run this step with -b mxnet"):
        workload.function(None, "cpu", {})  # run here (-b numpy with backends= declared): one line saying where


def test_module_level_use_of_mxnet_in_a_step_file_says_to_use_it_in_the_step(tmp_path):
    if importlib.util.find_spec("mxnet") is not None:
        pytest.skip("mxnet is importable in this Python: the file imports the real one")
    (tmp_path / "mxsteps.py").write_text(
        "import mxnet as mx\n\nCTX = mx.cpu()\n\n\ndef loop(backend, device, params):\n    return lambda: None\n"
    )
    with pytest.raises(InputError) as raised:
        plugins.load(plugins.canonical("mxsteps.py:loop", tmp_path))
    said = str(raised.value)
    assert said.startswith("cannot import mxsteps.py: AttributeError: mxnet.cpu: mxnet is not imported in this Python")
    assert "(at mxsteps.py:3 in <module>)" in said
    assert "install the package" not in said  # installing mxnet here is what cannot work
