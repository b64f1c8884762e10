"""Sizes per backend or device kind: a workload's own defaults (Param.per_backend) and a config's `params_for:`."""

from __future__ import annotations

import json

import pytest

from asyncbench.engine import expansion
from asyncbench.errors import InputError
from asyncbench.spec import config, overrides
from asyncbench.workloads import BUILT_IN
from tests.support.cli import invoke

SUITE_LIKE = """
defaults: {backends: [numpy, torch, mxnet], devices: [cpu]}
experiments:
  - workload: sync_async
    params: {n_ops: 2000}
    params_for: {mxnet: {n_ops: 500}, cpu: {shape: [1, 4]}}
  - workload: multi_device
"""


def cases(text: str, **options) -> dict[str, dict]:
    """Case id -> params, as `run` would plan them (no framework started: backends are not probed here)."""
    loaded = overrides.apply_overrides(config.loads(text), **options)
    planned = {}
    for experiment in loaded.experiments:
        for backend in experiment.backends:
            for point in experiment.points():
                planned[f"{experiment.name}/{backend}"] = expansion.params_on(
                    experiment, BUILT_IN[experiment.workload], backend, "cpu", point
                )
    return planned


def test_params_for_sets_a_param_for_one_backend_or_device_kind_only():
    planned = cases(SUITE_LIKE)
    assert planned["sync_async/mxnet"]["n_ops"] == 500
    assert planned["sync_async/torch"]["n_ops"] == 2000
    assert planned["sync_async/torch"]["shape"] == [1, 4]  # every backend on a cpu


def test_a_workloads_default_for_a_cpu_replaces_the_textbooks_gpu_size_unless_the_config_sets_one():
    planned = cases(SUITE_LIKE)
    assert planned["multi_device/torch"]["size"] == 1000
    assert planned["multi_device/torch"]["n_iter"] == 10
    multi = config.loads(SUITE_LIKE).experiments[1]
    assert expansion.params_on(multi, BUILT_IN["multi_device"], "torch", "cuda:0", {"size": 4000, "n_iter": 50})["size"] == 4000
    explicit = cases(SUITE_LIKE.replace("  - workload: multi_device\n", "  - workload: multi_device\n    params: {size: 3000}\n"))
    assert explicit["multi_device/torch"]["size"] == 3000


def test_the_command_line_decides_for_every_backend_over_params_for():
    assert cases(SUITE_LIKE, sets=["n_ops=100"])["sync_async/mxnet"]["n_ops"] == 100
    quick = cases(SUITE_LIKE.replace("n_ops: 500", "n_ops: 5000"), quick=True)
    assert quick["sync_async/mxnet"]["n_ops"] == 1000  # the quick size fits every backend
    assert quick["sync_async/torch"]["n_ops"] == 1000


def test_quick_never_raises_a_size_the_config_set():
    """--quick makes a run smaller: a config's n_ops of 100 ran at the quick 1000 (`ab gate.yaml --quick` too, which
    plans its cases as `run` does), and a backend's own 500 at 1000; a param the config left alone takes the quick
    value, and --set still wins."""
    small = "experiments:\n  - workload: sync_async\n    backends: [numpy]\n    params: {n_ops: 100}\n"
    assert cases(small, quick=True)["sync_async/numpy"]["n_ops"] == 100
    assert cases(small, quick=True, sets=["n_ops=5000"])["sync_async/numpy"]["n_ops"] == 5000
    assert cases(SUITE_LIKE, quick=True)["sync_async/mxnet"]["n_ops"] == 500
    assert cases(SUITE_LIKE, quick=True)["sync_async/torch"]["n_ops"] == 1000
    assert cases(SUITE_LIKE, quick=True)["multi_device/torch"]["n_iter"] == 4


@pytest.mark.parametrize(
    "params_for, fragment",
    [
        ("{tensorflow: {n_ops: 5}}", "params_for key 'tensorflow'"),
        ("{mxnet:tpu: {n_ops: 5}}", "unknown device kind 'tpu'"),
        ("{mxnet: {n_opz: 5}}", "unknown key 'n_opz'"),
        ("{mxnet: {n_ops: -1}}", "n_ops"),
        ("[mxnet]", "params_for must be a mapping"),
    ],
)
def test_a_bad_params_for_is_one_clear_error(params_for, fragment):
    text = f"experiments:\n  - workload: sync_async\n    params_for: {params_for}\n"
    with pytest.raises(InputError, match=fragment.replace("(", r"\(")):
        config.loads(text)


def test_list_states_the_sizes_per_backend():
    table = invoke("list", "--format", "json")
    assert table.exit_code == 0, table.output
    multi = next(w for w in json.loads(table.output) if w["name"] == "multi_device")
    size = next(p for p in multi["params"] if p["name"] == "size")
    assert size["per_backend"] == {"cpu": 1000}


def test_the_case_id_names_a_size_that_differs_from_the_default():
    experiment = config.loads(SUITE_LIKE).experiments[0]
    assert "n_ops=500" in expansion.case_of(experiment, BUILT_IN["sync_async"], "mxnet", "cpu", experiment.points()[0]).id


def test_quick_suite_samples_a_tenth_of_the_suites_time_and_its_square_products_share_one_size():
    """--quick must stay well under the suite (benchmarks/quick_speed.py): each case samples at most a tenth of the
    suite's max_time_s, and on a CPU the workloads of square random matrices take one size, so that on JAX their
    cases share one compiled generator (0.3-0.9 s to compile each) instead of compiling their own."""
    suite = config.default_suite()
    quick = overrides.apply_overrides(suite, quick=True)
    for full, short in zip(suite.experiments, quick.experiments, strict=True):
        assert short.settings.max_time_s <= full.settings.max_time_s / 10, full.name
    square = {"matmul", "barrier", "conversion", "multi_device"}
    squares = [e for e in quick.experiments if e.workload in square]
    sizes = {expansion.params_on(e, BUILT_IN[e.workload], "jax", "cpu", point)["size"] for e in squares for point in e.points()}
    assert len(sizes) == 1
