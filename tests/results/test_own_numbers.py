"""A stored figure held to the numbers it was made from, where the hostile corpus (tests/hostile) has no file of its
kind: an `ab` file's new sync point, a reference read without its case's wall time (files before schema 4), and
matmul's figures in a file of schema 1 (the clocks' medians divided)."""

from __future__ import annotations

import pytest

from asyncbench.errors import InputError
from asyncbench.results import matmul_figures, sampling_held
from asyncbench.results.fields import At
from asyncbench.results.new_syncs import NewSync
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
    sampling_held.check_steps(result, At("r.json"))
    result["syncs"]["sync_every=0"]["rounds"] = 6
    with pytest.raises(InputError, match="params.steps: 5 steps a sample, but its syncs of sync_every=0 divided by 1"):
        sampling_held.check_steps(result, At("r.json"))


@pytest.mark.parametrize("kind", ["bound", "syncs"])
@pytest.mark.parametrize("stored", [[1], "x", 7])
def test_a_bound_or_census_that_is_no_object_is_named_at_its_own_key(kind, stored) -> None:
    """`results[0].bound: [1]` was refused as `results[0].params.steps: expected an object` (the steps' check read it
    first, at the steps' key): the key to fix is the bound's."""
    result = {"params": {"steps": 5}, "metrics": {"step_s_k0": 0.001}, kind: stored}
    with pytest.raises(InputError, match=rf"r\.json: {kind}: expected an object, got {type(stored).__name__}"):
        sampling_held.check_steps(result, At("r.json"))


def _matmul(illusion: float, gflops: float, workload: str = "matmul") -> dict[str, object]:
    """A stored matmul case of 6 rounds (size 100, 1 product a sample: 2e6 FLOP), its figures `illusion` and `gflops`."""
    done, issue = [0.002, 0.002, 0.002, 0.004, 0.004, 0.004], [0.001] * 6
    summary = {"median": 0.003, "iqr": 0.002, "min": 0.002, "max": 0.004, "ci_low": 0.002, "ci_high": 0.004, "n": 6}
    return {
        "id": f"{workload}[numpy,cpu,size=100,n_iter=1]",
        "workload": workload,
        "params": {"size": 100, "n_iter": 1},
        "variants": {
            "matmul": {
                "samples": {"done_s": done, "issue_s": issue},
                "done_s": summary,
                "issue_s": {**summary, "median": 0.001, "iqr": 0.0, "min": 0.001, "max": 0.001, "ci_low": 0.001, "ci_high": 0.001},
            }
        },
        "metrics": {"illusion": illusion, "gflops": gflops},
        "bounds": {"illusion": [2.0, 4.0], "gflops": [0.5, 1.0]},
    }


def test_a_schema_1_matmul_is_held_to_its_clocks_medians_a_later_one_to_its_rounds() -> None:
    # schema 1 divided the clocks' medians: 0.003 / 0.001 = 3×, 2e6 FLOP / 3 ms = 0.667 GFLOP/s
    matmul_figures.check(_matmul(3.0, 2e6 / 0.003 / 1e9), At("r.json"), 1)
    with pytest.raises(InputError, match=r"metrics.illusion: 5 is not what the clocks of case .* \(done_s.median / issue_s.median: 3\)"):
        matmul_figures.check(_matmul(5.0, 2e6 / 0.003 / 1e9), At("r.json"), 1)
    # from schema 2 each is the median of its rounds' ratios: 3× still, but (1 + 0.5) / 2 = 0.75 GFLOP/s
    matmul_figures.check(_matmul(3.0, 0.75), At("r.json"), 12)
    with pytest.raises(
        InputError,
        match=r"metrics.gflops: 0.666667 is not what the samples of case .* \(the median of its rounds' 2·size³·n_iter / done_s: 0.75\)",
    ):
        matmul_figures.check(_matmul(3.0, 2e6 / 0.003 / 1e9), At("r.json"), 12)


def test_another_workloads_illusion_and_gflops_mean_what_it_says() -> None:
    matmul_figures.check(_matmul(5.0, 8.0, workload="mine.py:Matmul"), At("r.json"), 12)  # not the built-in: not held


def _clocks_edited(metrics: dict[str, object], bounds: dict[str, object] | None = None, gflops: float = 0.75) -> dict[str, object]:
    """The stored matmul case with its `done_s` and `issue_s` stated (the samples give 3 ms and 1 ms), edited."""
    row = _matmul(3.0, gflops)
    row["metrics"] = {**row["metrics"], "issue_s": 0.001, "done_s": 0.003, **metrics}  # type: ignore[dict-item]
    row["bounds"] = {**row["bounds"], **(bounds or {})}  # type: ignore[dict-item]
    return row


def test_matmuls_done_s_and_issue_s_are_held_to_its_samples() -> None:
    # done_s and issue_s restate the variant's clocks: the median of its samples, the interval of that median
    matmul_figures.check(_clocks_edited({}, {"done_s": [0.002, 0.004], "issue_s": [0.001, 0.001]}), At("r.json"), 12)
    refused = r"metrics.{}: 0.0025 is not what the samples of case .* \(the median of its rounds' {}: {}\)"
    with pytest.raises(InputError, match=refused.format("done_s", "done_s", "0.003")):
        matmul_figures.check(_clocks_edited({"done_s": 0.0025}), At("r.json"), 12)
    with pytest.raises(InputError, match=refused.format("issue_s", "issue_s", "0.001")):
        matmul_figures.check(_clocks_edited({"issue_s": 0.0025}), At("r.json"), 12)
    with pytest.raises(InputError, match=r"metrics.done_s: 1e\+300 is not what the samples"):  # moved with its interval
        matmul_figures.check(_clocks_edited({"done_s": 1e300}, {"done_s": [1e299, 1e301]}), At("r.json"), 12)
    with pytest.raises(InputError, match=r"bounds.done_s: \[0.0029, 0.0031\] is not an interval the samples of case"):
        matmul_figures.check(_clocks_edited({}, {"done_s": [0.0029, 0.0031]}), At("r.json"), 12)


def test_a_schema_1_matmuls_done_s_is_held_to_its_clocks_median() -> None:
    schema_1_gflops = 2e6 / 0.003 / 1e9  # the clocks' medians divided
    matmul_figures.check(_clocks_edited({}, gflops=schema_1_gflops), At("r.json"), 1)
    with pytest.raises(InputError, match=r"metrics.done_s: 0.0025 is not what the clocks of case .* \(done_s.median: 0.003\)"):
        matmul_figures.check(_clocks_edited({"done_s": 0.0025}, gflops=schema_1_gflops), At("r.json"), 1)
