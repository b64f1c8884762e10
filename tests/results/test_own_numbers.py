"""A stored figure held to the numbers it was made from, where the hostile corpus (tests/hostile) has no file of its
kind: an `ab` file's new sync point, and a reference read without its case's wall time (files before schema 4)."""

from __future__ import annotations

import pytest

from asyncbench.errors import InputError
from asyncbench.results import sampling_held
from asyncbench.results.fields import At
from asyncbench.results.paired import NewSync
from asyncbench.results.reference import Reference

POINT = {
    "file": "step.py",
    "line": 3,
    "kind": "conversion",
    "call": "jax.Array.item",
    "calls_per_step": 1.0,
    "wait_s_per_step": 0.002,
    "wait_ci_s": [0.001, 0.003],
    "drained_per_step": None,
    "calls_rounds": [1.0, 1.0, 1.0],
    "wait_s_rounds": [0.001, 0.002, 0.003],
}


def test_an_ab_files_new_sync_is_read_as_written() -> None:
    assert NewSync.from_dict({"variant": "v", "point": POINT}, At("ab.json")).point.wait_s_per_step == 0.002


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"wait_s_per_step": 1e6, "wait_ci_s": [2e6, 3e6]}, "point.wait_s_per_step: 1e\\+06 lies outside its own interval"),
        ({"wait_s_per_step": 0.0025}, "point.wait_s_per_step: 0.0025 is not the median of its census rounds"),
        ({"calls_per_step": 7.0}, "point.calls_per_step: 7 is not the median of its census rounds"),
    ],
)
def test_an_ab_files_new_sync_its_rounds_contradict_is_refused(edit: dict[str, object], said: str) -> None:
    with pytest.raises(InputError, match=said):
        NewSync.from_dict({"variant": "v", "point": {**POINT, **edit}}, At("ab.json"))


def test_a_reference_without_its_cases_time_is_held_to_its_shape_alone() -> None:
    stored = {"work": "float32 256×256 product ×4 on numpy cpu", "samples_s": [1e6, 1e6]}
    Reference.check(stored, At("r.json"), None)  # files before schema 4 keep no case_s: nothing to bound the samples by
    with pytest.raises(InputError, match="reference.samples_s: 2 samples that add up to 2e\\+06 s, taken within a case that ran 3 s"):
        Reference.check(stored, At("r.json") / "reference", 3.0)


def test_a_census_that_took_no_rounds_is_not_held_to_the_steps() -> None:
    """A synchronous backend's census (numpy: no rounds) says 1 step a call whatever the step form's `steps`: it
    divided nothing, and a file `run --syncs` writes there reads; a census that took rounds divided by its `steps`."""
    result = {"params": {"steps": 5}, "metrics": {"step_s_k0": 0.001}, "syncs": {"sync_every=0": {"rounds": 0, "steps_per_call": 1}}}
    sampling_held.check_steps(result, At("r.json") / "params" / "steps")
    result["syncs"]["sync_every=0"]["rounds"] = 6
    with pytest.raises(InputError, match="params.steps: 5 steps a sample, but its syncs of sync_every=0 divided by 1"):
        sampling_held.check_steps(result, At("r.json") / "params" / "steps")
