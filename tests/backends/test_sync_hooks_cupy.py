"""CuPy's sync hooks (backends/cupy_syncs.py) against a model of CuPy's classes (cupy_model.py): no CuPy here.

Every hook the list names is wrapped by the census and fires at the line that called it, with its kind; the calls
that do not wait (`get(blocking=False)`, `asnumpy` of a host array, a slice) pass uncounted; and the list never
names what cannot be hooked (`Device.synchronize`, on an immutable Cython class). What this cannot show: that
CuPy's real classes behave as the model does (written from CuPy v14's source; not run on a real CuPy)."""

from __future__ import annotations

import inspect
import io

import numpy as np
import pytest

from asyncbench.backends import cupy_syncs
from asyncbench.backends.cupy_backend import CupyBackend
from asyncbench.measure import census
from tests.backends import cupy_model

SINK = io.StringIO()


def lines_of(step) -> dict[str, int]:
    """The line of each `# hook: CALL` comment in `step`'s source."""
    source, first = inspect.getsourcelines(step)
    return {text.rpartition("# hook: ")[2].strip(): first + offset for offset, text in enumerate(source) if "# hook: " in text}


def every_wait(cupy) -> None:
    a = cupy.ndarray(np.arange(6.0))
    one = cupy.ndarray(np.float64(2.0))
    a.get()  # hook: cupy.ndarray.get
    cupy.asnumpy(a)  # hook: cupy.asnumpy
    one.item()  # hook: cupy.ndarray.item
    a.tolist()  # hook: cupy.ndarray.tolist
    int(one)  # hook: cupy.ndarray.__int__
    float(one)  # hook: cupy.ndarray.__float__
    complex(one)  # hook: cupy.ndarray.__complex__
    repr(a)  # hook: cupy.ndarray.__repr__
    print(a, file=SINK)  # hook: cupy.ndarray.__str__
    f"{one:.2f}"  # hook: cupy.ndarray.__format__
    bool(one)  # hook: cupy.ndarray.__bool__
    a.nonzero()  # hook: cupy.ndarray.nonzero
    cupy.nonzero(a)  # hook: cupy.nonzero
    cupy.argwhere(a)  # hook: cupy.argwhere
    a[a > 2]  # hook: cupy.ndarray[mask]
    cupy.cuda.Stream().synchronize()  # hook: cupy.cuda.Stream.synchronize
    cupy.cuda.Event().synchronize()  # hook: cupy.cuda.Event.synchronize
    cupy.cuda.runtime.deviceSynchronize()  # hook: cupy.cuda.runtime.deviceSynchronize
    cupy.cuda.runtime.streamSynchronize(0)  # hook: cupy.cuda.runtime.streamSynchronize


def no_wait(cupy):
    a = cupy.ndarray(np.arange(6.0))
    a.get(blocking=False)
    cupy.asnumpy(np.arange(3.0))
    cupy.asnumpy(a, blocking=False)
    a[1:3]
    return a > 2


@pytest.fixture
def cupy():
    return cupy_model.module()


def test_every_hook_fires_once_at_the_line_that_called_it_with_its_kind(cupy):
    hooks = cupy_syncs.cuda_hooks(cupy)
    found = census.take(lambda: every_wait(cupy), hooks, cupy_model.FRAMEWORK, rounds=1, fallback=False)
    where = {p.call: (p.line, str(p.kind), p.calls_per_step) for p in found.points}
    kinds = {hook.call: hook.kind for hook in hooks}
    expected = {call: (line, kinds[call], 1) for call, line in lines_of(every_wait).items()}
    assert where == expected
    assert set(expected) == set(kinds)  # every hook of the list is planted above: a hook that never fires fails
    assert "not hooked" not in found.coverage


def test_a_call_that_does_not_wait_passes_uncounted(cupy):
    found = census.take(lambda: no_wait(cupy), cupy_syncs.cuda_hooks(cupy), cupy_model.FRAMEWORK, rounds=1, fallback=False)
    assert found.points == ()


def test_the_hooks_are_removed_after_the_census(cupy):
    before = {name: vars(cupy.ndarray).get(name) for name in ("get", "item", "__bool__", "__getitem__")}
    census.take(lambda: every_wait(cupy), cupy_syncs.cuda_hooks(cupy), cupy_model.FRAMEWORK, rounds=1, fallback=False)
    assert {name: vars(cupy.ndarray).get(name) for name in before} == before
    assert cupy.ndarray.get is cupy_model._ndarray_base.get


def test_the_list_never_names_the_immutable_device_class(cupy):
    assert all(hook.owner is not cupy.cuda.Device for hook in cupy_syncs.cuda_hooks(cupy))
    with pytest.raises(TypeError, match="immutable"):
        cupy.cuda.Device.synchronize = lambda self: None  # what the census would meet


def test_the_backend_hands_its_hooks_over_without_importing_cupy_before(monkeypatch, cupy):
    monkeypatch.setattr(CupyBackend, "_cupy", lambda self: cupy)
    hooks = CupyBackend().sync_hooks("cuda:0")
    assert {hook.call for hook in hooks} == {hook.call for hook in cupy_syncs.cuda_hooks(cupy)}
