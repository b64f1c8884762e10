"""A step measured from a test (session/step_measurement.py): what a test gives becomes a workload on the backend its
arrays are for, and a sample of several steps is read per step."""

from __future__ import annotations

import numpy
import pytest

from asyncbench.engine.runner import summarize
from asyncbench.errors import InputError
from asyncbench.results.model import Samples
from asyncbench.session import step_measurement
from asyncbench.session.step_measurement import step_workload


def test_a_callable_of_no_arguments_is_measured_on_the_backend_whose_arrays_it_holds():
    """A test's `lambda: f(a)` over JAX arrays was timed as numpy (issue = done: its asynchrony hidden)."""
    jnp = pytest.importorskip("jax.numpy")

    a, b = jnp.ones((4, 4)), numpy.ones((4, 4))
    assert step_workload(lambda: a @ a, None)[1].backends == ("jax",)
    assert step_workload(lambda: b @ b, None)[1].backends == ("numpy",)
    assert step_workload(lambda: a @ a, "numpy")[1].backends == ("numpy",)  # named: as named
    with pytest.raises(InputError, match="say which backend"):
        step_workload(lambda: (a @ a, b @ b), None)


def test_a_sample_of_several_steps_is_read_per_step():
    """Every clock of a sample of 20 steps divided by 20, the statistics summarized again from them."""
    variant = summarize({"v": Samples(issue_s=(0.02, 0.04) * 3, done_s=(0.2, 0.4) * 3)})["v"]
    each = step_measurement.per_step(variant, 20)
    assert each.samples.issue_s == pytest.approx((0.001, 0.002) * 3)
    assert each.samples.done_s == pytest.approx((0.01, 0.02) * 3)
    assert each.done_s.median == pytest.approx(variant.done_s.median / 20)
    assert step_measurement.per_step(variant, 1).done_s.median == pytest.approx(variant.done_s.median)
