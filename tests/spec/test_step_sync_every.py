"""A step-form variant's name never lies: a wait every k steps with k above `steps` never comes in a sample (that
variant would be sync_every=0 under another name, its slowdown_kK made by no wait), so it is refused before anything
runs, in one line naming the fix; and --quick's few steps never drop below the largest wait asked for."""

import pytest

from asyncbench.errors import InputError
from asyncbench.spec import config, overrides
from asyncbench.workloads.step_form import StepWorkload

STEPS = """
import asyncbench


def _make(backend, device, params):
    return lambda: None


plain = asyncbench.step(_make, name="plain")
three = asyncbench.step(_make, name="three", steps=3)
wide = asyncbench.step(_make, name="wide", sync_every=(0, 8, 1), steps=50)
"""


def _config(tmp_path, experiment: str) -> config.Config:
    (tmp_path / "steps.py").write_text(STEPS)
    path = tmp_path / "c.yaml"
    path.write_text(f"defaults: {{backends: [numpy], devices: [cpu]}}\nexperiments:\n  - {experiment}\n")
    return config.load(path, validating=True)


@pytest.mark.parametrize(
    "experiment",
    [
        "{workload: steps.py:plain, params: {steps: 4, sync_every: [0, 8, 3]}}",
        "{workload: steps.py:plain, params: {steps: 1}}",  # the default sync_every [0, 4, 1]
        "{workload: steps.py:plain, sweep: {steps: [2, 20]}}",
        "{workload: steps.py:plain, params: {steps: 4}, sweep: {sync_every: [1, 8]}}",
    ],
)
def test_a_wait_that_never_comes_in_a_sample_is_refused_naming_the_fix(tmp_path, experiment):
    with pytest.raises(config.ConfigError) as refused:
        _config(tmp_path, experiment)
    said = str(refused.value)
    assert "is above steps" in said
    assert "never comes in a sample" in said
    assert "sync_every=0 under another name" in said
    assert "set sync_every=[" in said


def test_set_refuses_it_too_and_quick_keeps_every_wait(tmp_path):
    plan = _config(tmp_path, "{workload: steps.py:plain}")
    with pytest.raises(InputError, match=r"sync_every 8 is above steps 4: .* set sync_every=\[0,3\], or steps=8"):
        overrides.apply_overrides(plan, sets=["steps=4", "sync_every=[0,8,3]"])
    with pytest.raises(InputError, match=r"sync_every 4 is above steps 1: .* set sync_every=\[0,1\], or steps=4"):
        overrides.apply_overrides(plan, sets=["steps=1"])
    (quick,) = overrides.apply_overrides(plan, quick=True).experiments
    assert quick.params["steps"] >= max(quick.params["sync_every"])
    (wide,) = overrides.apply_overrides(_config(tmp_path, "{workload: steps.py:wide}"), quick=True).experiments
    assert wide.params["steps"] == 8  # --quick's 5 steps would leave the wait every 8 steps out
    (swept,) = overrides.apply_overrides(
        _config(tmp_path, "{workload: steps.py:plain, sweep: {sync_every: [1, 10]}}"), quick=True
    ).experiments
    assert swept.params["steps"] == 10


def test_quick_keeps_a_wait_that_set_asked_for(tmp_path):
    """A trial: `--quick --set sync_every=[0,8]` was refused ('sync_every 8 is above steps 5'), where the guide says
    --quick's few steps never drop below the largest wait asked for: quick's steps followed the config's waits only."""
    plan = _config(tmp_path, "{workload: steps.py:plain}")
    (quick,) = overrides.apply_overrides(plan, quick=True, sets=["sync_every=[0,8]"]).experiments
    assert quick.params["sync_every"] == [0, 8]
    assert quick.params["steps"] == 8
    (swept,) = overrides.apply_overrides(plan, quick=True, sets=["sync_every=[1],[10]"]).experiments
    assert swept.params["steps"] == 10
    (kept,) = overrides.apply_overrides(plan, quick=True, sets=["steps=12", "sync_every=[0,8]"]).experiments
    assert kept.params["steps"] == 12  # a --set value is never replaced by a quick one


def test_a_step_of_few_steps_drops_the_default_waits_it_cannot_take_and_refuses_its_own():
    three = _config_free_step(steps=3)
    assert three.param("sync_every").default == [0, 1]  # the default's 4 never comes in 3 steps: not the step's choice
    with pytest.raises(ValueError, match="sync_every 8 is above steps 4"):
        _config_free_step(steps=4, sync_every=(0, 8))


def _config_free_step(**how) -> StepWorkload:
    return StepWorkload(lambda backend, device, params: lambda: None, name="s", **how)
