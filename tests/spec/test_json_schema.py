"""The config's JSON Schema (`asyncbench schema`): built from the validator's own tables, it accepts every shipped
config and refuses what the validator refuses wherever JSON Schema can say the rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asyncbench.spec import config, executor, expect, json_schema
from asyncbench.spec.document import ConfigError, Document
from asyncbench.workloads import BUILT_IN
from tests.support.cli import invoke

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parent / "corpus" / "configs"
#: every config shipped, each file once (configs/ may link to the packaged suites)
SHIPPED = sorted(
    {p.resolve(): p for p in [*ROOT.glob("asyncbench/suites/*.yaml"), *ROOT.glob("configs/*.yaml"), *ROOT.glob("examples/*.yaml")]}.values()
)
#: the corpus configs the validator refuses for a rule JSON Schema cannot state (json_schema.VALIDATE_ONLY says
#: which rules): the schema accepts them, `asyncbench validate` does not
BEYOND_THE_SCHEMA = {
    "max-below-min.yaml",  # max_samples >= min_samples: two keys, and one may come from defaults
    "timeout-below-max-time.yaml",  # timeout_s > max_time_s: likewise
    "duplicate-experiment-names.yaml",  # names unique across the list (uniqueItems compares whole items)
    "max-time-infinite.yaml",  # .inf: JSON has no infinity, a JSON Schema number admits it
    "sweep-too-big.yaml",  # the product of the sweep's lengths
    "expect-unknown-metric.yaml",  # a check's metric is the workload's (the schema checks the grammar)
    "expect-bad-unit.yaml",  # a threshold's unit is its metric's
    "expect-stat-on-metric.yaml",  # whether a name is a metric (no .stat) or a clock is the workload's
}


def _validators() -> tuple[jsonschema.Draft202012Validator, jsonschema.Draft7Validator]:
    """The schema read as it declares (2020-12), and as yaml-language-server reads any schema (draft-07 semantics)."""
    built = json_schema.build()
    jsonschema.Draft202012Validator.check_schema(built)
    jsonschema.Draft7Validator.check_schema(built)
    return jsonschema.Draft202012Validator(built), jsonschema.Draft7Validator(built)


VALIDATORS = _validators()


@pytest.fixture(scope="module")
def validator():
    return VALIDATORS


def _problems(validators, value) -> list[str]:
    """What the schema finds wrong with `value`; read as draft-07 (an editor's reading) it must agree there is."""
    latest, draft7 = validators
    problems = [error.message for error in latest.iter_errors(value)]
    assert bool(problems) == any(True for _ in draft7.iter_errors(value)), value
    return problems


def test_the_schema_is_draft_2020_12_with_an_id_title_and_description():
    built = json_schema.build()
    assert built["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert built["$id"].startswith("urn:asyncbench:")
    assert built["title"]
    assert built["description"]
    assert built["additionalProperties"] is False
    assert built["required"] == ["experiments"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_config_validates_against_the_schema(validator, path):
    config.load(path)  # the validator's own word first
    assert _problems(validator, yaml.safe_load(path.read_text(encoding="utf-8"))) == []


def test_the_shipped_configs_are_found():
    assert len([p for p in SHIPPED if p.parent.name != "examples"]) >= 9
    assert any(p.parent.name == "examples" for p in SHIPPED)


def _corpus() -> list[Path]:
    """The corpus configs that are YAML the reader takes (spec.document): its own mistakes (not UTF-8, not YAML, a
    duplicate key, a tag, an alias bomb) come before any schema, and an editor's YAML support says them."""
    readable = []
    for path in sorted(CORPUS.glob("*.yaml")):
        try:
            Document(path.read_bytes().decode("utf-8"), path.name)
        except (ConfigError, UnicodeDecodeError):
            continue
        readable.append(path)
    return readable


READABLE = _corpus()


@pytest.mark.parametrize("path", READABLE, ids=lambda p: p.name)
def test_a_config_the_validator_refuses_the_schema_refuses_too(validator, path):
    with pytest.raises(config.ConfigError):
        config.load(path)
    problems = _problems(validator, yaml.safe_load(path.read_text(encoding="utf-8")))
    if path.name in BEYOND_THE_SCHEMA:
        assert problems == [], f"{path.name} is refused by the schema now: take it out of BEYOND_THE_SCHEMA"
    else:
        assert problems, f"the schema accepts {path.name}, which the validator refuses"


def test_the_corpus_holds_mistakes_of_every_kind_the_schema_says():
    assert len(READABLE) >= 40


def test_beyond_the_schema_is_what_the_module_says():
    """The refusals only `validate` says are listed by the module, for its docs and its description."""
    said = " ".join(json_schema.VALIDATE_ONLY)
    for word in ("min_samples", "timeout_s", "duplicate", "infinite", "sweep", "metric", "file"):
        assert word in said, word
    assert "asyncbench validate" in json_schema.build()["description"]


MATMUL = {"workload": "matmul"}


@pytest.mark.parametrize(
    "refused",
    [
        {"experiments": [MATMUL], "defaults": {"warmup": "two"}},
        {"experiments": [MATMUL], "defaults": {"warmup": True}},
        {"experiments": [MATMUL], "defaults": {"max_time_s": "2 minutes"}},
        {"experiments": [MATMUL], "defaults": {"max_rel_noise": "3s"}},
        {"experiments": [MATMUL], "defaults": {"ab_margin": 5}},
        {"experiments": [MATMUL], "defaults": {"backend": ["torch"]}},
        {"experiments": [MATMUL], "defaults": {"devices": ["gpu"]}},
        {"experiments": [MATMUL], "defaults": {"backends": []}},
        {"experiments": [MATMUL], "nmae": "x"},
        {"experiments": [{**MATMUL, "parms": {}}]},
        {"experiments": [{**MATMUL, "params": {"size": "big"}}]},
        {"experiments": [{**MATMUL, "params": {"sise": 10}}]},
        {"experiments": [{**MATMUL, "params": {"dtype": "float8"}}]},
        {"experiments": [{**MATMUL, "params_for": {"tpu": {"size": 10}}}]},
        {"experiments": [{**MATMUL, "params_for": {"cuda": {"size": 0}}}]},
        {"experiments": [{**MATMUL, "sweep": {"size": 100}}]},
        {"experiments": [{**MATMUL, "sweep": {"size": [100, 100]}}]},
        {"experiments": [{**MATMUL, "expect": ["speedup => 2"]}]},
        {"experiments": [{**MATMUL, "name": ""}]},
        {"experiments": [{**MATMUL, "name": "a\x1bb"}]},
        {"experiments": [{"workload": "matmull"}]},
        {"experiments": [{"workload": "steps.py"}]},
        {"experiments": [{"workload": "training_memory", "params": {"sync_every": [1, 1]}}]},
        {"experiments": [{"workload": "multi_device", "params": {"partner": "cuda"}}]},
        {"experiments": [MATMUL], "executor": {"kind": "k8s"}},
        {"experiments": [MATMUL], "executor": {"partiton": "gpu"}},
        {"experiments": [MATMUL], "executor": {"gpus_per_node": -1}},
        {"experiments": [MATMUL], "executor": {"time_min": "1h"}},
        {"experiments": [MATMUL], "executor": {"time_min": 0}},
        {"experiments": [MATMUL], "executor": {"partition": "two words"}},
        {"experiments": [MATMUL], "executor": {"sbatch": {"partition": "gpu"}}},
        {"experiments": [MATMUL], "executor": {"sbatch": {"wrap": "rm -rf ~"}}},
        {"experiments": [MATMUL], "executor": {"sbatch": {"qos": True}}},
        {"experiments": [MATMUL], "executor": {"sbatch": {"qos": "high\n#SBATCH --wrap=x"}}},
    ],
)
def test_a_wrong_type_or_an_unknown_key_is_refused_by_both(validator, refused):
    with pytest.raises(config.ConfigError):
        config.loads(yaml.safe_dump(refused))
    assert _problems(validator, refused), refused


@pytest.mark.parametrize(
    "accepted",
    [
        {"experiments": [MATMUL], "defaults": {"backends": "numpy", "devices": "cuda:1", "max_time_s": "500ms", "max_rel_noise": "3%"}},
        {"experiments": [MATMUL], "defaults": {"ab_margin": "5%", "timeout_s": "2s", "max_time_s": 1, "warmup": 0}},
        {"experiments": [{**MATMUL, "expect": "done_s.median[matmul] < 10ms", "params_for": {"mxnet:cpu": {"size": 10}}}]},
        {"experiments": [{**MATMUL, "expect": ["syncs_per_step == 0", "sync_wait_s[print] < 1ms"]}]},
        {"experiments": [{"workload": "training_memory", "sweep": {"sync_every": [1, [2, 0]]}}]},
        {"experiments": [{"workload": "multi_device", "params": {"partner": "cuda:1"}}]},
        {"experiments": [MATMUL], "executor": {"time_min": "1:30:00", "partition": None, "sbatch": {"requeue": True, "mem": 4000}}},
    ],
)
def test_what_the_validator_accepts_the_schema_accepts(validator, accepted):
    config.loads(yaml.safe_dump(accepted))
    assert _problems(validator, accepted) == []


def test_a_users_workload_takes_any_params(validator, tmp_path):
    """A file's workload declares its params in Python: the schema cannot know them, and does not refuse them."""
    assert _problems(validator, {"experiments": [{"workload": "bench/steps.py:train_step", "params": {"anything": 1}}]}) == []


def test_every_key_of_the_validators_tables_is_in_the_schema_with_a_type_and_a_description():
    """Derived, not copied: each table the validator checks keys against is the schema's list of properties."""
    built = json_schema.build()
    defs = built["$defs"]
    assert json_schema.unruled() == []
    for keys, properties in (
        (config.TOP_KEYS, built["properties"]),
        (config.DEFAULTS_KEYS, defs["defaults"]["properties"]),
        (config.EXPERIMENT_KEYS, defs["experiment"]["properties"]),
        (tuple(executor.KEYS), defs["executor"]["properties"]),
    ):
        assert list(properties) == list(keys)
        for key, rule in properties.items():
            assert rule.get("description"), key
    for workload in BUILT_IN.values():
        params = defs[f"{workload.name}.params"]
        assert list(params["properties"]) == [p.name for p in workload.params]
        assert params["additionalProperties"] is False
        for param in workload.params:
            assert params["properties"][param.name]["description"] == param.help


def test_an_enum_where_the_validator_has_a_list_of_choices():
    defs = json_schema.build()["$defs"]
    from asyncbench.backends import BACKENDS

    assert defs["backend"]["enum"] == list(BACKENDS)
    assert defs["matmul.params"]["properties"]["dtype"]["enum"] == list(BUILT_IN["matmul"].param("dtype").choices)
    assert set(BUILT_IN) <= set(defs["experiment"]["properties"]["workload"]["anyOf"][0]["enum"])


@pytest.mark.parametrize(
    "text",
    [
        "speedup >= 1.5",
        "done_s.median[async] < 10ms",
        "syncs_per_step[train.py:42, variant=item] <= 1",
        "x => 1",
        "x >= ",
        "1 < x",
        " a<2 ",
        "bound == device",
        "bound[item] == host",
        "bound >= device",
        "slack_share[host] >= 20%",
    ],
)
def test_the_check_pattern_is_the_parsers_own_grammar(text):
    pattern = json_schema.build()["$defs"]["check"]["pattern"]
    assert bool(re.search(pattern, text)) == bool(expect._CHECK.fullmatch(text) or expect._READING.fullmatch(text))


def test_schema_prints_the_schema_and_writes_it_with_o(tmp_path):
    printed = invoke("schema")
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.output) == json_schema.build()
    out = tmp_path / "asyncbench.schema.json"
    written = invoke("schema", "-o", str(out))
    assert written.exit_code == 0, written.output
    assert json.loads(out.read_text(encoding="utf-8")) == json_schema.build()
    assert "{" not in written.output


def test_schema_help_has_an_example():
    shown = invoke("schema", "--help").output
    assert "Examples" in shown
    assert "asyncbench schema -o" in shown
    assert "yaml-language-server" in shown


def test_schema_to_a_folder_is_bad_input(tmp_path):
    result = invoke("schema", "-o", str(tmp_path))
    assert result.exit_code == 2
    assert "Traceback" not in result.output


#: values wrong for most keys (each key draws one of them a quarter of the time)
ODD = st.sampled_from([True, -1, 0, 2.5, "float8", "cuda", "-1s", "0s", "5", [], [1, 1]])


def _mostly(*values) -> st.SearchStrategy:
    return st.one_of(st.sampled_from(values), st.sampled_from(values), st.sampled_from(values), ODD)


SETTINGS = {
    **{name: _mostly(0, 1, 6, 12) for name in ("warmup", "min_samples", "max_samples")},
    "max_time_s": _mostly(0.5, 2, "2s", "500ms", " 1e-3 s"),
    "timeout_s": _mostly(30, "400s"),
    "max_rel_noise": _mostly(0.03, "3%"),
    "ab_margin": _mostly("5%", "25%"),
}


def _near(param) -> st.SearchStrategy:
    """A param's values at and around its declaration: its default, quick value, bounds and choices, or an odd one."""
    extra = {"str": ["cuda:1"], "ints": [[2, 0], [1, 3]]}.get(str(param.kind), [])
    return _mostly(*(v for v in [param.default, param.quick, param.minimum, param.maximum, *param.choices, *extra] if v is not None))


def _experiment(workload) -> st.SearchStrategy:
    near = {p.name: _near(p) for p in workload.params}
    return st.fixed_dictionaries(
        {"workload": st.just(workload.name)},
        optional={
            "params": st.fixed_dictionaries({}, optional=near),
            "sweep": st.fixed_dictionaries({}, optional={name: st.lists(value, min_size=1, max_size=3) for name, value in near.items()}),
            "backends": _mostly("numpy", ["torch", "jax"], ["tensorflow"]),
            "devices": _mostly("cpu", ["auto", "cuda:0"], "gpu"),
            "expect": _mostly("done_s.median < 10ms", ["issue_s.max < 1s"], "speedup => 1"),
            **SETTINGS,
        },
    )


CONFIGS = st.fixed_dictionaries(
    {"experiments": st.lists(st.sampled_from(list(BUILT_IN.values())).flatmap(_experiment), min_size=1, max_size=2)},
    optional={"defaults": st.fixed_dictionaries({}, optional=SETTINGS)},
)


@given(CONFIGS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_schema_refuses_no_config_the_validator_accepts(value):
    """An editor must never mark a config `validate` takes: whatever the validator accepts, the schema accepts."""
    try:
        config.loads(yaml.safe_dump(value))
    except config.ConfigError:
        return
    assert _problems(VALIDATORS, value) == [], value


def test_an_empty_expect_list_which_validate_accepts_the_schema_accepts_too():
    value = {"experiments": [{"workload": "matmul", "expect": []}]}
    config.loads(yaml.safe_dump(value))  # validate takes it: no check
    assert _problems(VALIDATORS, value) == []
