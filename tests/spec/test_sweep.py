"""Sweeps: `sweep:` in a config and `--set KEY=V1,V2` expand into one case per point with a stable id."""

from __future__ import annotations

import pytest

from asyncbench.engine import expansion
from asyncbench.errors import InputError
from asyncbench.spec import config, overrides

SWEPT = """\
experiments:
  - workload: sync_async
    params: {n_ops: 5000}
    sweep: {n_ops: [10, 1000, 100], dtype: [float32, float64]}
    backends: [torch]
    devices: [cpu]
"""


def load_text(text: str) -> config.Config:
    return config.loads(text, source="t.yaml")


def test_sweep_is_a_cartesian_product_in_order_and_wins_over_params():
    (experiment,) = load_text(SWEPT).experiments
    points = [(p["n_ops"], p["dtype"]) for p in experiment.points()]
    assert points == [(10, "float32"), (10, "float64"), (1000, "float32"), (1000, "float64"), (100, "float32"), (100, "float64")]
    assert config.Config("t", "<t>", (experiment,)).to_dict()["experiments"][0]["sweep"]["n_ops"] == [10, 1000, 100]


def test_every_point_has_a_stable_id_naming_the_swept_params_even_at_their_default(fake_backend):
    cfg = load_text(SWEPT.replace("[10, 1000, 100]", "[1000, 100]"))
    ids = [case.id for case, _ in expansion.expand(cfg, {"torch": fake_backend})]
    # 1000 is the default n_ops and float32 the default dtype: swept, so named anyway
    assert ids == [
        "sync_async[torch,cpu,n_ops=1000,dtype=float32]",
        "sync_async[torch,cpu,n_ops=1000,dtype=float64]",
        "sync_async[torch,cpu,n_ops=100,dtype=float32]",
        "sync_async[torch,cpu,n_ops=100,dtype=float64]",
    ]


def test_a_list_param_swept_over_numbers_runs_one_element_lists():
    text = "experiments:\n  - workload: training_memory\n    sweep: {sync_every: [1, 2, 0]}\n"
    (experiment,) = load_text(text).experiments
    assert [p["sync_every"] for p in experiment.points()] == [[1], [2], [0]]


@pytest.mark.parametrize(
    "sweep, fragments",
    [
        ("{n_opz: [1, 2]}", ["t.yaml:3", "sweep.n_opz", "did you mean 'n_ops'"]),
        ("{n_ops: []}", ["sweep.n_ops", "non-empty list"]),
        ("{n_ops: 10}", ["sweep.n_ops", "non-empty list"]),
        ("{n_ops: [10, ten]}", ["sweep.n_ops", "expected an integer"]),
        ("{n_ops: [10, 10]}", ["sweep.n_ops", "distinct"]),
        ("{n_ops: [0, 10]}", ["sweep.n_ops", "at least 1"]),
        ("[n_ops]", ["sweep", "must be a mapping"]),
        (
            "{n_ops: ["
            + ", ".join(map(str, range(1, 102)))
            + "], dtype: [float16, float32, float64, bfloat16], shape: ["
            + ", ".join(f"[{n}]" for n in range(1, 26))
            + "]}",
            ["sweep", "10100 points, more than 10000"],
        ),
    ],
)
def test_bad_sweeps_are_config_errors_with_line_and_key(sweep, fragments):
    with pytest.raises(config.ConfigError) as caught:
        load_text(f"experiments:\n  - workload: sync_async\n    sweep: {sweep}\n")
    for fragment in fragments:
        assert fragment in str(caught.value)


@pytest.mark.parametrize(
    "text, values",
    [
        ("n_ops=100", [100]),
        ("n_ops=10,100,1000", [10, 100, 1000]),
        ("shape=[64,64],[128,128]", [[64, 64], [128, 128]]),
        ("shape=[64, 64]", [[64, 64]]),
        ("dtype=float32,float16", ["float32", "float16"]),
        ("sync_async.n_ops=7", [7]),
        ("host_s=2e-05", [2e-05]),  # YAML 1.2's float: PyYAML's 1.1 read it as the string '2e-05', refused as no number
        ("host_s=1e-4,5E-4", [1e-4, 5e-4]),
        ("name=e5", ["e5"]),
    ],
)
def test_parse_set_reads_one_value_or_a_sweep(text, values):
    assert overrides.parse_set(text)[2] == values


def test_set_with_several_values_sweeps_and_with_one_value_ends_a_sweep():
    swept = overrides.apply_overrides(load_text(SWEPT), sets=["n_ops=1,2"])
    assert swept.experiments[0].sweep["n_ops"] == (1, 2)
    fixed = overrides.apply_overrides(load_text(SWEPT), sets=["n_ops=3"])
    assert "n_ops" not in fixed.experiments[0].sweep
    assert fixed.experiments[0].params["n_ops"] == 3
    assert [p["n_ops"] for p in fixed.experiments[0].points()] == [3, 3]  # still swept over dtype


@pytest.mark.parametrize(
    "sets, fragment",
    [(["max_time_s=1,2"], "only params can be swept"), (["n_ops=1,x"], "expected an integer"), (["n_ops="], "no value")],
)
def test_bad_set_sweeps_are_input_errors(sets, fragment):
    with pytest.raises(InputError, match=fragment):
        overrides.apply_overrides(load_text(SWEPT), sets=sets)


def test_quick_keeps_the_sweep():
    quick = overrides.apply_overrides(load_text(SWEPT), quick=True)
    assert quick.experiments[0].sweep["n_ops"] == (10, 1000, 100)


def test_a_config_reads_scientific_notation_as_a_number():
    from asyncbench.spec.document import Document

    assert Document("a: 2e-05\nb: 1e3\nc: '2e-05'\n", "inline").value == {"a": 2e-05, "b": 1000.0, "c": "2e-05"}
