"""The state a step keeps outside itself, around `--bound-verify jit`'s trace (backends.step_state through
step_capture.jax_jit): a step that stores an array in a dict, an object's attribute or a global list is refused in
one line naming the place, and the holder is put back, so the eager step runs on as before (not on a tracer)."""

from __future__ import annotations

from typing import Any

import pytest

from asyncbench.backends import step_capture, step_state


def _jax() -> Any:
    return pytest.importorskip("jax")


def test_a_step_that_keeps_its_weights_in_a_dict_is_refused_and_the_dict_put_back() -> None:
    jax = _jax()
    x = jax.numpy.ones((8, 8)) / 8
    state = {"w": jax.numpy.ones((8, 8)), "calls": 0}

    def step() -> Any:
        state["w"], loss = state["w"] - 0.01 * (x @ state["w"]), state["w"].sum()
        state["calls"] += 1
        return loss

    jitted, why = step_capture.jax_jit(step)
    assert jitted is None
    assert why == "not jitted: the step stores a traced value outside itself (state['w']); jit would trace the store once and drop it"
    assert isinstance(state["w"], jax.Array)
    assert not isinstance(state["w"], jax.core.Tracer)
    assert state["calls"] == 1  # as the eager call left it: the trace's effects undone
    before = state["w"]
    step()  # before the fix: UnexpectedTracerError (the tracer the trace left in the dict)
    assert not jax.numpy.allclose(state["w"], before)


class Model:
    def __init__(self, jnp: Any) -> None:
        self.w = jnp.ones((4,))

    def step(self) -> Any:
        self.w = self.w * 0.5
        return self.w.sum()


def test_a_method_that_stores_on_its_object_is_refused_naming_the_attribute() -> None:
    jax = _jax()
    model = Model(jax.numpy)
    jitted, why = step_capture.jax_jit(model.step)
    assert jitted is None
    assert why is not None
    assert "(self.w)" in why
    assert not isinstance(model.w, jax.core.Tracer)
    assert float(model.step()) == 4 * 0.25  # the eager step runs on: one call before the trace, this one after


LOSSES: list[Any] = []


def test_a_step_that_appends_to_a_global_list_is_refused_and_the_list_put_back() -> None:
    jax = _jax()
    x = jax.numpy.ones((4,))

    def step() -> Any:
        y = x * 2
        LOSSES.append(y)
        return y

    LOSSES.clear()
    jitted, why = step_capture.jax_jit(step)
    assert jitted is None
    assert "(LOSSES[1])" in (why or "")
    assert len(LOSSES) == 1
    assert not isinstance(LOSSES[0], jax.core.Tracer)


def test_a_host_read_after_a_store_is_refused_as_the_host_read_and_the_store_put_back() -> None:
    jax = _jax()
    state = {"w": jax.numpy.ones((4,))}

    def step() -> Any:
        state["w"] = state["w"] * 0.5
        return float(state["w"].sum())  # the host read, after the store

    jitted, why = step_capture.jax_jit(step)
    assert jitted is None
    assert (why or "").startswith("not jitted: the step reads a value on the host")
    assert not isinstance(state["w"], jax.core.Tracer)
    step()


def test_a_step_that_keeps_only_host_values_outside_itself_is_still_jitted() -> None:
    jax = _jax()
    x = jax.numpy.ones((4,))
    seen = {"calls": 0}

    def step() -> Any:
        seen["calls"] += 1  # a Python int: no tracer stored
        return x * 2

    jitted, why = step_capture.jax_jit(step)
    assert why is None
    assert jitted is not None


def test_the_snapshot_names_a_place_nested_in_holders_and_puts_it_back() -> None:
    inner: dict[str, Any] = {"m": 1}
    outer = {"opt": {"state": inner}}

    def step() -> Any:
        return outer

    held = step_state.taken(step)
    inner["m"] = "traced"
    assert held.traced(lambda value: value == "traced") == ["outer['opt']['state']['m']"]
    held.put_back(lambda value: value == "traced")
    assert inner == {"m": 1}
