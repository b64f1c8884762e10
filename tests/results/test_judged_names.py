"""The names `ab` judges of each built-in workload (results.judged_names), held to the workloads' own declarations:
the table is kept apart from them only so that a reader imports no framework."""

from __future__ import annotations

from asyncbench.engine import paired_ratios
from asyncbench.results import judged_names
from asyncbench.workloads import BUILT_IN


def test_the_table_names_every_built_in_workload_s_gated_variants_and_rates():
    assert set(judged_names.BUILT_IN) == set(BUILT_IN)
    for name, workload in BUILT_IN.items():
        declared = tuple(variant.split()[0] for variant in workload.variants)
        variants, metrics = judged_names.BUILT_IN[name]
        assert variants == workload.gated({}, declared), name
        assert metrics == tuple(paired_ratios.directed_metrics(workload)), name


def test_a_family_of_variants_is_one_per_value_of_its_param():
    assert judged_names.variants(("sync_every=K", "x"), {"sync_every": [0, 4]}) == ("sync_every=0", "sync_every=4", "x")
