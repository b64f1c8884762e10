"""numpy as the host's converter does not make a backend-neutral step numpy-only (issue 53, item 2).

numpy is the array library every backend converts to: `numpy.asarray(x @ x)` of the arrays a step got from
`backend` runs on each backend (and on an asynchronous one it is a wait the census must see). A step that builds
its arrays with numpy and never asks `backend` for any times numpy code, and stays numpy's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy
import pytest

from asyncbench.backends import get_backend
from asyncbench.workloads import step_reach
from asyncbench.workloads.step_form import StepWorkload, variant_name
from tests.support.cli import asyncbench
from tests.support.helpers import forgetting_user_modules, load_step, runs_on

STEPS = """\
import numpy
import numpy as np
from numpy import asarray

import asyncbench
from reach_helpers import make


@asyncbench.step(sync_every=(0,), steps=3)
def converts(backend, device, params):
    x = backend.random((32, 32), "float32", device)()
    return lambda: numpy.asarray(x @ x)  # line 12: the host copy that waits


@asyncbench.step
def converts_in_a_nested_step(backend, device, params):
    def step():
        return asarray(backend.ones((4, 4), "float32", device))

    return step


@asyncbench.step
def converts_through_a_helper(backend, device, params):
    x = make(backend, device)
    return lambda: np.asarray(x @ x)


@asyncbench.step
def builds_with_numpy(backend, device, params):
    x = np.ones((32, 32), np.float32)
    return lambda: x @ x


@asyncbench.step
def builds_with_numpy_random_and_waits_through_backend(backend, device, params):
    x = numpy.random.rand(32, 32)
    return lambda: (x @ x, backend.barrier(device))
"""
HELPERS = """\
def make(backend, device):
    return backend.random((32, 32), "float32", device)()
"""
ALL = ("numpy", "torch", "jax")


@pytest.fixture(autouse=True)
def _user_modules():
    yield from forgetting_user_modules("reach_helpers")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "reach_helpers.py").write_text(HELPERS)
    return tmp_path


def _load(folder: Path, name: str) -> StepWorkload:
    return load_step(folder, name)


def _runs_on(workload: StepWorkload) -> set[str]:
    return runs_on(workload, ALL)


@pytest.mark.parametrize(
    "name, where",
    [
        ("converts", set(ALL)),  # its arrays are the backend's; numpy only copies them to the host
        ("converts_in_a_nested_step", set(ALL)),  # `from numpy import asarray`, in the step it returns
        ("converts_through_a_helper", set(ALL)),  # the backend's arrays made by a helper from its own folder
        ("builds_with_numpy", {"numpy"}),  # numpy arrays, never the backend's: numpy code
        ("builds_with_numpy_random_and_waits_through_backend", {"numpy"}),  # a barrier makes no array
    ],
)
def test_numpy_as_a_converter_leaves_a_step_neutral_and_as_its_arrays_keeps_it_numpys(folder, name, where):
    assert _runs_on(_load(folder, name)) == where


def test_the_reach_reads_the_steps_backend_parameter_by_its_own_name():
    def renamed(b, device, params):
        x = b.ones((2, 2), "float32", device)
        return lambda: numpy.asarray(x)

    def builds(b, device, params):
        x = numpy.ones((2, 2))
        return lambda: (x, b.name)

    assert step_reach.named(renamed) == frozenset()
    assert step_reach.named(builds) == frozenset({"numpy"})


def test_a_converting_step_sets_up_and_runs_on_torch_with_torchs_arrays(folder):
    workload = _load(folder, "converts")
    prepared = workload.setup(get_backend("torch"), "cpu", workload.defaults())
    assert type(prepared.variants[variant_name(0)]()).__module__ == "numpy"  # the host copy of a torch product


def test_the_census_names_the_numpy_asarray_line_as_a_wait_where_the_backend_runs_ahead(folder, tmp_path):
    pytest.importorskip("jax")
    done = asyncbench(
        *["run", "-w", "steps.py:converts", "-d", "cpu", "-b", "torch", "-b", "jax"],
        *["--quick", "--syncs", "--no-progress", "--set", "max_time_s=0.5", "-o", str(tmp_path / "r.json")],
        cwd=folder,
        env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    results = {r["backend"]: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert {name: r["status"] for name, r in results.items()} == {"torch": "ok", "jax": "ok"}, done.stdout
    # JAX on a CPU runs ahead: numpy.asarray of its array is the host waiting for the step's work, on line 12
    (census,) = results["jax"]["syncs"].values()
    assert ("steps.py", 12) in {(Path(p["file"]).name, p["line"]) for p in census["points"]}, census
    # torch on a CPU runs each op before it returns: the census runs there and says nothing waits
    assert results["torch"]["syncs"], results["torch"]


def test_a_step_that_converts_with_numpy_is_not_run_on_mxnet_whose_arrays_numpy_misreads(folder):
    # numpy.asarray of an MXNet NDArray (no __array__) reads it element by element into an object array: a row there
    # would time that, not the step
    reason = _load(folder, "converts").skip_reason(get_backend("mxnet"), "cpu", {})
    assert reason is not None
    assert "\n" not in reason
    assert "converts with numpy" in reason
    assert "backend.to_host" in reason
    assert '"mxnet"' in reason  # how a step that does run there says so
    assert _load(folder, "converts_in_a_nested_step").skip_reason(get_backend("mxnet"), "cpu", {}) is not None


def test_without_b_a_step_is_planned_only_on_the_backends_its_code_runs_on(folder, monkeypatch):
    from asyncbench.backends import BACKENDS
    from asyncbench.spec import named_workloads

    monkeypatch.chdir(folder)
    (folder / "more.py").write_text(
        "import torch\nimport asyncbench\n\n\n@asyncbench.step\ndef on_torch(backend, device, params):\n"
        "    x = torch.ones(4, 4)\n    return lambda: x @ x\n\n\n"
        "@asyncbench.step\ndef neutral(backend, device, params):\n"
        '    x = backend.random((4, 4), "float32", device)()\n    return lambda: x @ x\n\n\n'
        '@asyncbench.step(backends=("jax",))\ndef declared(backend, device, params):\n    return lambda: None\n'
    )
    planned = {
        name: named_workloads.for_workloads(named_workloads.workload_keys([name])).experiments[0].backends
        for name in ("steps.py:converts", "steps.py:builds_with_numpy", "more.py:on_torch", "more.py:neutral", "more.py:declared")
    }
    assert planned == {
        "steps.py:converts": tuple(b for b in BACKENDS if b != "mxnet"),
        "steps.py:builds_with_numpy": ("numpy",),
        "more.py:on_torch": ("torch",),
        "more.py:neutral": tuple(BACKENDS),
        "more.py:declared": ("jax",),
    }
