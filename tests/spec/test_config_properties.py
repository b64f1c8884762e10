"""Property-based tests of the config loader: no input makes it raise anything but its own error type."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asyncbench.errors import InputError, each_error
from asyncbench.spec import config, expect, overrides
from asyncbench.workloads import BUILT_IN

KEYS = st.sampled_from(
    [
        "name",
        "defaults",
        "experiments",
        "workload",
        "params",
        "sweep",
        "expect",
        "backends",
        "devices",
        "size",
        "n_ops",
        "dtype",
        "min_samples",
        "max_samples",
        "max_time_s",
        "warmup",
        "shape",
        "sync_every",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(list(BUILT_IN) + ["torch", "numpy", "cupy", "cpu", "cuda:0", "auto", "float32", "speedup >= 1"]),
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.one_of(KEYS, st.text(max_size=8)), children, max_size=5)),
    max_leaves=25,
)
# Mostly well-shaped configs, so the checks deep inside (params, sweeps, expectations) are reached too.
EXPERIMENT = st.fixed_dictionaries(
    {"workload": st.one_of(st.sampled_from(list(BUILT_IN)), SCALARS)},
    optional={
        "params": DOCUMENTS,
        "sweep": DOCUMENTS,
        "expect": DOCUMENTS,
        "devices": DOCUMENTS,
        "backends": DOCUMENTS,
        "name": SCALARS,
        "min_samples": SCALARS,
        "max_time_s": SCALARS,
    },
)
CONFIGS = st.fixed_dictionaries({"experiments": st.lists(EXPERIMENT, max_size=3)}, optional={"defaults": DOCUMENTS, "name": SCALARS})

RELAXED = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def loads_or_config_error(text: str) -> None:
    try:
        config.loads(text, source="h.yaml")
    except config.ConfigError as error:
        # every mistake of the text is said at once: each one line naming the file, in line order
        mistakes = each_error(error)
        for mistake in mistakes:
            assert isinstance(mistake, config.ConfigError)
            assert str(mistake).startswith("h.yaml")
            assert "\n" not in str(mistake).strip()
        lines = [mistake.line or 0 for mistake in mistakes]
        assert lines == sorted(lines)
        assert len({str(m) for m in mistakes}) == len(mistakes)  # none said twice


@RELAXED
@given(st.text(max_size=300))
def test_any_text_is_a_config_or_a_config_error(text):
    loads_or_config_error(text)


@RELAXED
@given(DOCUMENTS)
def test_any_yaml_document_is_a_config_or_a_config_error(document):
    loads_or_config_error(yaml.safe_dump(document))


@RELAXED
@given(CONFIGS)
def test_any_config_shaped_document_is_a_config_or_a_config_error(document):
    loads_or_config_error(yaml.safe_dump(document))


@RELAXED
@given(st.text(max_size=60))
def test_any_set_option_is_applied_or_an_input_error(text):
    base = config.loads("experiments:\n  - workload: sync_async\n", source="h.yaml")
    try:
        overrides.apply_overrides(base, sets=[text])
    except InputError:
        pass


@RELAXED
@given(st.text(max_size=60), st.sampled_from(list(BUILT_IN.values())))
def test_any_check_text_parses_or_is_a_value_error(text, workload):
    try:
        expect.parse(text, workload)
    except ValueError:
        pass
