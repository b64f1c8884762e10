from pathlib import Path

import pytest

from asyncbench.errors import InputError, each_error
from asyncbench.spec import config, named_workloads, overrides, schema
from asyncbench.workloads import BUILT_IN

ROOT = Path(__file__).resolve().parents[2]

VALID = """\
name: t
defaults:
  backends: [torch]
  devices: [cpu]
  min_samples: 3
experiments:
  - workload: sync_async
    params: {n_ops: 100}
  - name: mm
    workload: matmul
    backends: [numpy, torch]
"""


def load_text(text: str) -> config.Config:
    return config.loads(text, source="t.yaml")


def test_valid_config_resolves_defaults_and_params():
    c = load_text(VALID)
    first, second = c.experiments
    assert first.name == "sync_async"
    assert first.params["n_ops"] == 100
    assert first.params["shape"] == [1, 2]
    assert first.backends == ("torch",)
    assert first.devices == ("cpu",)
    assert first.settings.min_samples == 3
    assert first.explicit == {"n_ops"}
    assert second.name == "mm"
    assert second.backends == ("numpy", "torch")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("experiments:\n  - workload: sync_async\n    parms: {n_ops: 1}\n", ["t.yaml:3", "experiments[0].parms", "did you mean 'params'"]),
        ("experiments:\n  - workload: sync_asink\n", ["t.yaml:2", "experiments[0].workload", "did you mean 'sync_async'"]),
        ("experiments:\n  - workload: sync_async\n    params:\n      n_opss: 5\n", ["t.yaml:4", "params.n_opss", "did you mean 'n_ops'"]),
        ("experiments:\n  - workload: sync_async\n    params: {n_ops: ten}\n", ["params.n_ops", "expected an integer"]),
        ("experiments:\n  - workload: sync_async\n    params: {n_ops: -1}\n", ["params.n_ops", "at least 1"]),
        ("experiments:\n  - workload: matmul\n    params: {dtype: float33}\n", ["params.dtype", "float32"]),
        ("experiments:\n  - workload: matmul\n    devices: [cdua:0]\n", ["t.yaml:3", "devices[0]", "malformed device"]),
        ("experiments:\n  - workload: matmul\n    backends: [pytorch]\n", ["backends[0]", "unknown backend"]),
        ("experiments: []\n", ["experiments", "non-empty"]),
        ("experiments:\n  - workload: matmul\n  - workload: matmul\n", ["t.yaml:3", "duplicate experiment name"]),
        ("experiments:\n  - workload: matmul\n    workload: sync_async\n", ["duplicate key"]),
        ("experiments: !!python/object/apply:os.system ['echo hi']\n", ["unsupported YAML value"]),
        ("experiments: [\n", ["not valid YAML"]),
        ("", ["empty"]),
        ("- just\n- a list\n", ["must be a mapping"]),
        ("defaults: {min_samples: 0}\nexperiments:\n  - workload: matmul\n", ["defaults.min_samples", "at least 1"]),
        ("defaults: {max_time_s: .nan}\nexperiments:\n  - workload: matmul\n", ["max_time_s", "positive number"]),
        ("defaults: {min_samples: 9, max_samples: 3}\nexperiments:\n  - workload: matmul\n", ["max_samples"]),
        ("experiments:\n  - workload: sync_async\n    params: {shape: [0, 2]}\n", ["params.shape", "positive integers"]),
    ],
)
def test_bad_configs_name_file_line_and_key(text, expected):
    with pytest.raises(config.ConfigError) as caught:
        load_text(text)
    message = str(caught.value)
    for fragment in expected:
        assert fragment in message
    assert "\n" not in message


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        config.load(tmp_path / "absent.yaml")


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_config_validates(path):
    assert config.load(path).experiments


def test_default_suite_loads_from_the_package():
    suite = config.default_suite()
    assert {e.workload for e in suite.experiments} >= {"matmul", "sync_async"}


def test_quick_shrinks_params_and_settings_but_set_wins():
    c = overrides.apply_overrides(load_text(VALID), quick=True, sets=["sync_async.n_ops=50"])
    sync_async, mm = c.experiments
    assert sync_async.params["n_ops"] == 50
    assert mm.params["size"] == BUILT_IN["matmul"].param("size").quick
    assert mm.settings.max_time_s <= schema.QUICK_SETTINGS.max_time_s


def test_overrides_filter_workloads_and_replace_devices():
    c = overrides.apply_overrides(load_text(VALID), workloads=["matmul"], devices=["cuda:1"], backends=["torch"])
    (only,) = c.experiments
    assert only.workload == "matmul"
    assert only.devices == ("cuda:1",)
    assert only.backends == ("torch",)


def test_a_backend_never_meets_a_device_kind_it_does_not_run_on():
    with pytest.raises(InputError, match="numpy runs on cpu only"):
        overrides.apply_overrides(load_text(VALID), workloads=["matmul"], devices=["cuda"], backends=["numpy"])


@pytest.mark.parametrize(
    "text, name, value",
    [
        ("max_time_s=2s", "max_time_s", 2.0),
        ("max_time_s=500ms", "max_time_s", 0.5),
        ("max_rel_noise=3%", "max_rel_noise", 0.03),
        ("timeout_s=90s", "timeout_s", 90.0),
        ("ab_margin=20%", "ab_margin", 0.2),
    ],
)
def test_settings_take_the_units_checks_take(text, name, value):
    (experiment, *_) = overrides.apply_overrides(load_text(VALID), sets=[text]).experiments
    assert getattr(experiment.settings, name) == pytest.approx(value)


def test_a_comma_separated_shape_says_to_write_a_list():
    with pytest.raises(InputError, match=r"write shape=\[64,64\]"):
        overrides.apply_overrides(named_workloads.for_workloads(named_workloads.workload_keys(["sync_async"])), sets=["shape=64,64"])


def test_a_results_file_given_as_a_config_says_what_to_do(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"schema_version": 2, "tool": {"name": "asyncbench", "version": "0"}, "results": []}')
    with pytest.raises(config.ConfigError, match="this is a results file, not a config: use `asyncbench show FILE`"):
        config.load(path)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"sets": ["n_ops"]}, "KEY=VALUE"),
        ({"sets": ["nops=3"]}, "no selected experiment"),
        ({"sets": ["n_ops=abc"]}, "expected an integer"),
        ({"devices": ["gpu"]}, "malformed device"),
        ({"backends": ["tensorflow"]}, "unknown backend"),
        ({"sets": ["max_rel_noise=3"]}, "max_rel_noise is a fraction: 0.03 for ±3%, got 3"),
        ({"sets": ["max_rel_noise=1"]}, "max_rel_noise is a fraction"),
        ({"sets": ["max_rel_noise=0"]}, "expected a positive number"),
    ],
)
def test_bad_overrides_are_input_errors(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        overrides.apply_overrides(load_text(VALID), **kwargs)


def test_a_second_cpu_device_is_refused_saying_only_multi_device_uses_one():
    """A new user read "cpu (and `cpu:1`)" for jax and mxnet and ran `-d cpu:1`: the refusal says why it is none."""
    with pytest.raises(InputError, match="malformed device 'cpu:1'") as refused:
        overrides.apply_overrides(load_text(VALID), devices=["cpu:1"])
    assert "only multi_device uses a second CPU device" in str(refused.value)
    with pytest.raises(InputError) as other:
        overrides.apply_overrides(load_text(VALID), devices=["gpu"])
    assert "multi_device" not in str(other.value)


def test_a_misspelt_workload_name_is_refused_once_naming_the_option():
    with pytest.raises(InputError, match="-w 'matmull': unknown workload 'matmull' \\(did you mean 'matmul'\\?\\)"):
        named_workloads.workload_keys(["matmull"])


def test_set_can_change_a_setting():
    c = overrides.apply_overrides(load_text(VALID), sets=["max_time_s=2"])
    assert all(e.settings.max_time_s == 2.0 for e in c.experiments)


# --- every mistake of a file at once ------------------------------------------------------------------------------


def mistakes(text: str) -> list[str]:
    """What loading `text` says, one string per mistake (each without a newline), in the order said."""
    with pytest.raises(config.ConfigError) as caught:
        load_text(text)
    said = [str(one) for one in each_error(caught.value)]
    assert all("\n" not in one for one in said)
    return said


def test_every_mistake_of_a_file_is_said_at_once_in_line_order():
    """Three mistakes, found by the checks in another order (the params of line 6 are checked before the unknown
    workload of line 8, the executor last), are one error, said in line order."""
    text = (
        "experiments:\n"  # 1
        "  - workload: sync_async\n"  # 2
        "    executor_typo: 1\n"  # 3
        "    params:\n"  # 4
        "      n_ops: 10\n"  # 5
        "      shape: [0, 2]\n"  # 6
        "  - workload: matmull\n"  # 7
        "executor: {kind: slrm}\n"  # 8
    )
    said = mistakes(text)
    assert [line.split(":")[1] for line in said] == ["3", "6", "7", "8"]
    assert "experiments[0].executor_typo: unknown key" in said[0]
    assert "experiments[0].params.shape: expected a list of 1 to 8 positive integers" in said[1]
    assert "experiments[1].workload: unknown workload 'matmull' (did you mean 'matmul'?)" in said[2]
    assert "executor.kind: expected one of here, local, slurm" in said[3]


def test_several_mistakes_are_one_config_error_and_a_single_one_is_itself():
    with pytest.raises(config.ConfigErrors) as caught:
        load_text("experiments:\n  - workload: matmul\n    params: {size: 0, dtype: float33}\n")
    assert isinstance(caught.value, config.ConfigError)  # callers that catch ConfigError still do
    assert [e.path for e in caught.value.errors] == ["experiments[0].params.size", "experiments[0].params.dtype"]
    with pytest.raises(config.ConfigError) as single:
        load_text("experiments:\n  - workload: matmul\n    params: {size: 0}\n")
    assert not isinstance(single.value, config.ConfigErrors)
    assert str(single.value) == "t.yaml:3: experiments[0].params.size: must be at least 1, got 0"


def test_a_mistake_every_experiment_inherits_is_said_once():
    """A bad default is said where it is written, not once more by each experiment that reads it."""
    text = (
        "defaults: {backends: [tensorflow], min_samples: 10, max_samples: 2}\n"
        "experiments:\n  - workload: matmul\n  - workload: sync_async\n  - {workload: barrier, max_samples: 3}\n"
    )
    said = mistakes(text)
    assert len(said) == 3, said
    assert "t.yaml:1: defaults: max_samples (2) is below min_samples (10)" in said
    assert "t.yaml:1: defaults.backends[0]: unknown backend 'tensorflow'; known: numpy, torch, cupy, jax, mxnet" in said
    assert "t.yaml:5: experiments[2]: max_samples (3) is below min_samples (10)" in said  # its own combination


def test_every_cross_key_rule_is_said_beside_the_keys_own_mistakes():
    """One `validate` finds them all: both combinations that cannot work, and beside a per-key mistake of other
    keys; a combination whose key was itself refused is not said (its value is not the one written)."""
    said = mistakes(
        "experiments:\n  - workload: matmul\n    min_samples: 50\n    max_samples: 10\n"
        "    timeout_s: 1\n    max_time_s: 5\n    warmup: -1\n"
    )
    assert len(said) == 3, said
    assert any("max_samples (10) is below min_samples (50)" in line for line in said)
    assert any("timeout_s (1 s) must exceed max_time_s (5 s)" in line for line in said)
    assert any("experiments[0].warmup: must be at least 0" in line for line in said)
    refused = mistakes(
        "experiments:\n  - workload: matmul\n    min_samples: 50\n    max_samples: -1\n    timeout_s: 1\n    max_time_s: 5\n"
    )
    assert len(refused) == 2, refused
    assert any("max_samples: must be at least 1" in line for line in refused)
    assert any("timeout_s (1 s) must exceed" in line for line in refused)


def test_a_combination_is_not_judged_on_the_default_in_place_of_a_refused_default():
    """The trial: `max_time_s: 10 minutes` in defaults was rightly refused, then `experiments[1]: timeout_s (0.5 s)
    must exceed max_time_s (10 s)` was said too: 10 s is the built-in default standing in for the refused value,
    a number the config never wrote. Only the refusal is said; an experiment that sets the key itself is judged on
    its own value."""
    said = mistakes("defaults: {max_time_s: 10 minutes}\nexperiments:\n  - {workload: matmul, timeout_s: 0.5}\n")
    assert len(said) == 1, said
    assert "defaults.max_time_s: expected a number" in said[0]
    own = mistakes("defaults: {max_time_s: 10 minutes}\nexperiments:\n  - {workload: matmul, timeout_s: 0.5, max_time_s: 2}\n")
    assert len(own) == 2, own
    assert any("experiments[0]: timeout_s (0.5 s) must exceed max_time_s (2 s)" in line for line in own)
    refused_timeout = mistakes("defaults: {timeout_s: soon}\nexperiments:\n  - {workload: matmul, max_time_s: 400}\n")
    assert len(refused_timeout) == 1, refused_timeout  # not judged on the default timeout_s of 300 s


def test_a_misspelt_key_is_not_said_again_as_missing():
    """`experiment:` and `wrkload:` are misspellings: saying that `experiments` and `workload` are missing too
    would be the same mistake twice."""
    assert mistakes("experiment:\n  - workload: matmul\n") == [
        "t.yaml:2: experiment: unknown key 'experiment' in the config (did you mean 'experiments'?); "
        "allowed: name, defaults, experiments, executor, bound, bound_verify"
    ]
    said = mistakes("experiments:\n  - wrkload: matmul\n  - workload: matmul\n    params: {sise: 3}\n")
    assert len(said) == 2, said
    assert "did you mean 'workload'?" in said[0]
    assert "did you mean 'size'?" in said[1]
    assert mistakes("experiments:\n  - name: x\n") == [
        "t.yaml:2: experiments[0]: missing key 'workload' (one of: matmul, sync_async, barrier, conversion, copy_overlap, "
        "multi_device, training_memory, small_ops, comm_overlap, or your own: path/to/file.py:Name, package.module:Name, "
        "or an installed plugin's name)"
    ]


def test_mistakes_of_the_yaml_itself_are_said_together_and_stop_there():
    """Duplicate keys and refused tags are all said; the values they dropped are not checked (a dropped workload
    is no 'missing workload'); YAML that does not parse is one mistake, whatever else the file holds."""
    said = mistakes("experiments:\n  - workload: matmul\n    workload: barrier\n  - workload: !!python/name:os.system\n    size: 3\n")
    assert [line.split(":")[1] for line in said] == ["3", "4"]
    assert "duplicate key 'workload'" in said[0]
    assert "unsupported YAML value" in said[1]
    assert mistakes("experiments:\n  - workload: matmull\n  - workload: [sync_async\n") == [
        "t.yaml:4: not valid YAML: expected ',' or ']', but got '<stream end>'"
    ]


def test_loading_several_configs_says_each_files_mistakes(tmp_path):
    from asyncbench.session import planning
    from asyncbench.session.requests import Selection

    first, second, good = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"
    first.write_text("experiments:\n  - workload: matmull\n  - workload: barrier\n    warmup: -1\n")
    second.write_text("experiments:\n  - workload: sync_async\n    devices: [gpu0]\n")
    good.write_text("experiments:\n  - workload: conversion\n")
    with pytest.raises(InputError) as caught:
        planning.plan(Selection(configs=(str(first), str(good), str(second))))
    said = [str(one) for one in each_error(caught.value)]
    assert [one.split(": ")[0] for one in said] == [f"{first}:2", f"{first}:4", f"{second}:3"]


def test_a_case_s_ab_margin_is_a_positive_fraction_and_a_dumped_plan_leaves_it_out_when_unset(tmp_path):
    from asyncbench.spec import dump

    with pytest.raises(InputError, match="ab_margin"):
        overrides.apply_overrides(load_text(VALID), sets=["ab_margin=0%"])
    # a plain number would be a fraction here and a percentage to --max-regression: it must carry its %, and the
    # refusal offers both forms it may mean, in the user's own number, as --max-regression's does
    both = r"such as 5% or 500% \(a plain number is ambiguous: 5 may mean 5%, or 500% as a fraction\), got 5$"
    with pytest.raises(InputError, match=r"write the margin with its %, " + both):
        overrides.apply_overrides(load_text(VALID), sets=["ab_margin=5"])
    with pytest.raises(InputError, match=r"such as 10% \(a plain number is ambiguous: 10 may mean 10%, or 1000% as a fraction\), got 10$"):
        overrides.apply_overrides(load_text(VALID.replace("defaults:", "defaults:\n  ab_margin: 10\n", 1)))
    plain = overrides.apply_overrides(load_text(VALID))
    assert plain.experiments[0].settings.ab_margin is None
    assert "ab_margin" not in dump.dumps(plain)  # null would not read back as a setting
    path = tmp_path / "plan.yaml"
    path.write_text(dump.dumps(overrides.apply_overrides(load_text(VALID), sets=["ab_margin=25%"])))
    assert config.load(path).experiments[0].settings.ab_margin == pytest.approx(0.25)


def test_bound_true_asks_for_what_bounds_each_step_and_is_kept_in_the_resolved_config() -> None:
    loaded = config.loads("bound: true\nexperiments:\n  - workload: matmul\n", "t.yaml")
    assert loaded.bound is True
    assert loaded.to_dict()["bound"] is True
    plain = config.loads("experiments:\n  - workload: matmul\n", "t.yaml")
    assert plain.bound is False
    assert "bound" not in plain.to_dict()


def test_bound_must_be_true_or_false() -> None:
    assert mistakes("bound: yes please\nexperiments:\n  - workload: matmul\n") == [
        "t.yaml:1: bound: bound must be true or false (as `run --bound`), got a string"
    ]


def test_bound_verify_asks_for_the_capture_implies_bound_and_is_kept_in_the_resolved_config() -> None:
    loaded = config.loads("bound_verify: jit\nexperiments:\n  - workload: matmul\n", "t.yaml")
    assert (loaded.bound, loaded.bound_verify) == (True, "jit")
    assert loaded.to_dict()["bound_verify"] == "jit"
    assert "bound_verify" not in config.loads("bound: true\nexperiments:\n  - workload: matmul\n", "t.yaml").to_dict()
    assert mistakes("bound_verify: xla\nexperiments:\n  - workload: matmul\n") == [
        "t.yaml:1: bound_verify: bound_verify must be one of jit, compile, graph (as `run --bound-verify`), got 'xla'"
    ]


def test_a_duplicate_name_is_said_beside_an_unknown_workload_of_the_same_experiment():
    """`validate` said the unknown workload, and the duplicate name only once that was fixed: both at once."""
    said = mistakes("experiments:\n  - name: a\n    workload: matmul\n  - name: a\n    workload: matmull\n")
    assert len(said) == 2
    assert "duplicate experiment name 'a' (also experiments[0])" in said[0]
    assert "unknown workload 'matmull'" in said[1]
    first = mistakes("experiments:\n  - name: a\n    workload: matmull\n  - name: a\n    workload: matmul\n")
    assert [("unknown workload" in one, "duplicate experiment name" in one) for one in first] == [(True, False), (False, True)]
