"""A result's variants held to the family its params list, and its measured times to a year, where the hostile corpus
(tests/hostile) has no file of its kind: a training_memory row whose variants were renamed, a plugin's own `_kN` metric,
and a user's "no limit" max_time_s beside a measured time."""

from __future__ import annotations

import pytest

from asyncbench.errors import InputError
from asyncbench.results import sampling_held, step_figures
from asyncbench.results.fields import At

EPOCHS = {"params": {"sync_every": [1, 0]}, "metrics": {"epoch_s_k1": 0.2, "epoch_s_k0": 0.1, "host_rss_delta_mb_k0": 1.0}}


def test_a_family_its_params_list_is_read_as_measured() -> None:
    step_figures.measured(EPOCHS, {"sync_every=1": {}, "sync_every=0": {}}, At("r.json"))


def test_a_training_memory_row_whose_variants_were_renamed_is_refused() -> None:
    with pytest.raises(InputError, match="metrics.epoch_s_k1: a figure of variant 'sync_every=1', which the result does not have"):
        step_figures.measured(EPOCHS, {"fast": {}, "slow": {}}, At("r.json"))
    with pytest.raises(InputError, match="variants: no variant 'sync_every=1', which its params give"):
        step_figures.measured({**EPOCHS, "metrics": {}}, {"sync_every=0": {}}, At("r.json"))


def test_a_plugins_own_numbered_metric_beside_named_variants_is_read() -> None:
    """`recall_k5` of a workload whose variants are named, not numbered: no family to hold it to."""
    step_figures.measured({"params": {"sizes": [5]}, "metrics": {"recall_k5": 0.9}}, {"a": {}, "b": {}}, At("r.json"))


def test_a_measured_time_past_a_year_is_refused_but_a_users_limit_is_not() -> None:
    sampling = {"rounds": 6, "stopped_by": "max_rel_noise", "elapsed_s": 2.0, "max_time_s": 1e12, "rel_noise": 0.01, "max_rel_noise": 0.03}
    sampling_held.check_sampling(sampling, At("r.json") / "sampling")  # max_time_s=1e12: a user's "no limit"
    with pytest.raises(InputError, match="sampling.elapsed_s: 1e\\+12 s is longer than any time a run measures"):
        sampling_held.check_sampling({**sampling, "elapsed_s": 1e12}, At("r.json") / "sampling")
