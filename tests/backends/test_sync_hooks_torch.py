"""torch's sync hooks (backends/torch_syncs.py) on this CPU-only torch, and its census on a CPU.

Every hook of the CUDA list really intercepts its call — torch.Tensor's methods are C slots of TensorBase, shadowed
on the Python subclass — shown by calling each through `census.take` with every tensor taken for a device tensor
(`on_device`); each hook's `when` keeps a call that does not wait out; on a CPU the backend has no hooks and a step
with `.item()` shows no wait, its census saying torch runs synchronously there. And torch's sync debug mode's
warnings are caught with the user's frame (`debug_warnings`, against a model of torch's warning: no CUDA here)."""

from __future__ import annotations

import inspect
import io
import operator
import types
import warnings

import pytest
import torch

from asyncbench.backends import torch_syncs
from asyncbench.backends.handles import SyncHook
from asyncbench.backends.torch_backend import TorchBackend
from asyncbench.engine import runner
from asyncbench.engine.measuring import CaseOptions
from asyncbench.measure import census
from asyncbench.measure.frames import CAN_WATCH
from asyncbench.results.model import OK, Case, Settings
from asyncbench.workloads import BUILT_IN
from tests.backends import torch_model

SINK = io.StringIO()
#: the one host tensor of every_wait: every other tensor there is taken for a device tensor
HOST = torch.empty(8)
TORCH = frozenset({"torch"})


def lines_of(step) -> dict[str, int]:
    """The line of each `# hook: CALL` comment in `step`'s source."""
    source, first = inspect.getsourcelines(step)
    return {text.rpartition("# hook: ")[2].strip(): first + offset for offset, text in enumerate(source) if "# hook: " in text}


def every_wait() -> None:
    x = torch.arange(8.0)
    one = torch.tensor(3)
    mask = x > 3
    x[0].item()  # hook: torch.Tensor.item
    x.tolist()  # hook: torch.Tensor.tolist
    float(x[0])  # hook: torch.Tensor.__float__
    int(x[0])  # hook: torch.Tensor.__int__
    operator.index(one)  # hook: torch.Tensor.__index__
    x.cpu()  # hook: torch.Tensor.cpu
    x.numpy()  # hook: torch.Tensor.numpy
    repr(x)  # hook: torch.Tensor.__repr__
    f"{x[0]:.3f}"  # hook: torch.Tensor.__format__
    bool(x[1])  # hook: torch.Tensor.__bool__
    x.nonzero()  # hook: torch.Tensor.nonzero
    torch.nonzero(x)  # hook: torch.nonzero
    x.masked_select(mask)  # hook: torch.Tensor.masked_select
    torch.masked_select(x, mask)  # hook: torch.masked_select
    x[mask]  # hook: torch.Tensor[mask]
    x.to("cpu")  # hook: torch.Tensor.to
    HOST.copy_(x)  # hook: torch.Tensor.copy_
    with pytest.raises((AssertionError, RuntimeError)):  # a CPU-only torch: the call is made, and fails
        HOST.cuda()  # hook: torch.Tensor.cuda
    with pytest.raises((AssertionError, RuntimeError)):
        torch.cuda.synchronize()  # hook: torch.cuda.synchronize
    with pytest.raises((AssertionError, RuntimeError, TypeError)):
        torch.cuda.Stream.synchronize(types.SimpleNamespace())  # hook: torch.cuda.Stream.synchronize
    with pytest.raises((AssertionError, RuntimeError, TypeError, AttributeError)):
        torch.cuda.Event.synchronize(types.SimpleNamespace())  # hook: torch.cuda.Event.synchronize


def test_every_hook_intercepts_its_call_at_the_line_that_made_it():
    """Each hook fires once at its line, every tensor but HOST taken for a device tensor (`HOST.copy_(x)` and
    `HOST.cuda()` cross the host-device line)."""
    hooks = torch_syncs.cuda_hooks(torch, on_device=lambda tensor: tensor is not HOST)
    found = census.take(every_wait, hooks, TORCH, rounds=1, fallback=False)
    where = {p.call: (p.line, str(p.kind), p.calls_per_step) for p in found.points}
    kinds = {hook.call: hook.kind for hook in hooks}
    expected = {call: (line, kinds[call], 1) for call, line in lines_of(every_wait).items()}
    assert where == expected
    assert set(expected) == set(kinds)  # every hook of the list is planted above: a hook that never fires fails
    assert "not hooked" not in found.coverage


def test_the_hooks_are_removed_after_the_census_and_torch_works_as_before():
    def functions() -> tuple[object, ...]:
        return (torch.nonzero, torch.masked_select, torch.cuda.synchronize, torch.cuda.Event.synchronize, torch.cuda.Stream.synchronize)

    before = functions()
    census.take(lambda: torch.ones(2).sum().item(), torch_syncs.cuda_hooks(torch, on_device=lambda t: True), TORCH, rounds=1)
    assert all(name not in vars(torch.Tensor) for name in ("item", "__bool__", "__getitem__", "copy_", "to"))
    assert functions() == before
    assert torch.Tensor.__repr__.__module__ == "torch._tensor"
    x = torch.arange(4.0)
    assert bool(x[1])
    assert x[x > 1].tolist() == [2.0, 3.0]


def test_calls_that_do_not_wait_pass_uncounted():
    """CPU tensors on a CUDA machine (`is_cuda` false): conversions, printing, bool, masks, host copies."""

    def step() -> None:
        x = torch.arange(8.0)
        x[0].item()
        bool(x[1])
        x[x > 3]
        x[1:3]
        x.to(torch.float64)
        torch.empty(8).copy_(x)
        print(x, file=SINK)

    assert census.take(step, torch_syncs.cuda_hooks(torch), TORCH, rounds=1, fallback=False).points == ()


@pytest.mark.parametrize(
    ("call", "args", "kwargs", "waits"),
    [
        ("torch.Tensor.to", ("cpu",), {}, True),
        ("torch.Tensor.to", ("cpu",), {"non_blocking": True}, False),  # into pinned memory torch allocates
        ("torch.Tensor.to", (torch.device("cpu"),), {}, True),
        ("torch.Tensor.to", (torch.float16,), {}, False),
        ("torch.Tensor.to", ("cuda:0",), {}, False),  # device to device: queued
        ("torch.Tensor.copy_", ("host",), {}, False),  # into a device tensor from a device tensor
        ("torch.Tensor[mask]", (slice(1, 3),), {}, False),
        ("torch.Tensor[mask]", (torch.tensor([True, False]),), {}, True),
        ("torch.Tensor[mask]", ((0, torch.tensor([True, False])),), {}, True),
        ("torch.Tensor[mask]", (torch.tensor([0, 1]),), {}, False),  # integer indices: shape known
    ],
)
def test_each_when_keeps_only_the_calls_that_wait(call, args, kwargs, waits):
    """A device tensor's calls (on_device: always)."""
    (hook,) = [h for h in torch_syncs.cuda_hooks(torch, on_device=lambda t: True) if h.call == call]
    args = tuple(torch.ones(2) if a == "host" else a for a in args)
    assert hook.when is not None
    assert hook.when(torch.ones(2), *args, **kwargs) is waits


@pytest.mark.parametrize(
    ("pinned", "non_blocking", "waits"),
    [(False, False, True), (False, True, True), (True, False, True), (True, True, False)],
)
def test_a_copy_from_the_device_waits_unless_non_blocking_into_pinned_memory(pinned, non_blocking, waits):
    """`host.copy_(device, non_blocking=...)`: into pageable memory the driver waits even when asked not to (what
    torch's debug mode misses)."""
    device = torch.ones(2)
    (hook,) = [h for h in torch_syncs.cuda_hooks(torch, on_device=lambda t: t is device) if h.call == "torch.Tensor.copy_"]
    host = types.SimpleNamespace(is_pinned=lambda: pinned)
    assert hook.when is not None
    assert hook.when(host, device, non_blocking=non_blocking) is waits


def test_a_copy_to_the_device_waits_unless_non_blocking():
    device = torch.ones(2)
    (hook,) = [h for h in torch_syncs.cuda_hooks(torch, on_device=lambda t: t is device) if h.call == "torch.Tensor.copy_"]
    assert hook.when is not None
    assert hook.when(device, torch.ones(2)) is True
    assert hook.when(device, torch.ones(2), non_blocking=True) is False


def test_the_backend_has_no_hooks_on_a_cpu_and_the_cuda_list_on_cuda():
    assert TorchBackend().sync_hooks("cpu") == ()
    assert {h.call for h in TorchBackend().sync_hooks("cuda:0")} == {h.call for h in torch_syncs.cuda_hooks(torch)}


def test_a_step_with_item_on_a_cpu_shows_no_wait_and_says_torch_is_synchronous_there():
    workload = BUILT_IN["conversion"]
    case = Case(
        id="conversion[torch,cpu]",
        experiment="conversion",
        workload="conversion",
        backend="torch",
        device="cpu",
        params={**workload.defaults(quick=True), "size": 64, "n_iter": 2},
        settings=Settings(warmup=1, min_samples=3, max_samples=3, max_time_s=10.0, max_rel_noise=1.0),
    )
    result = runner.run_case(case, workload, TorchBackend(), CaseOptions(syncs=True))
    assert result.status == OK, result.reason
    assert "item" in result.syncs
    for name, found in result.syncs.items():
        assert (found.rounds, found.points) == (0, ()), name
        assert found.coverage == "torch runs synchronously on cpu: nothing waits for a device"


# ---- torch's sync debug mode, modelled: torch's own warning, as its PyWarningHandler raises it -------------------


def _torch_op() -> None:
    """What a synchronizing C function does in warn mode: a UserWarning at stacklevel 1, i.e. at its caller's line
    (a Python function stands in for it, so stacklevel 2 here)."""
    warnings.warn(f"{torch_syncs.DEBUG_MESSAGE} (Triggered internally at /c10/cuda/CUDAFunctions.h:120.)", UserWarning, stacklevel=2)


def test_debug_mode_warnings_reach_the_witness_with_the_calling_frame_each_time():
    cuda = torch_model.Cuda()
    fake = types.SimpleNamespace(cuda=cuda)
    seen: list[tuple[str, int, str]] = []
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")
        with torch_syncs.debug_warnings(fake, lambda frame, where: seen.append((frame.f_code.co_name, frame.f_lineno, where))):
            assert cuda.mode == 1
            for _ in range(2):
                _torch_op()
                line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
            warnings.warn("another warning", UserWarning, stacklevel=1)
        assert cuda.set == ["warn", 0]  # turned on, then back to what it was
    name = test_debug_mode_warnings_reach_the_witness_with_the_calling_frame_each_time.__name__
    assert seen == [(name, line, "/c10/cuda/CUDAFunctions.h:120"), (name, line, "/c10/cuda/CUDAFunctions.h:120")]
    assert [str(w.message) for w in shown] == ["another warning"]  # others are shown as before


def test_debug_mode_is_restored_after_an_exception_and_available_only_with_cuda():
    cuda = torch_model.Cuda()
    cuda.mode = 2
    with pytest.raises(ValueError, match="boom"), torch_syncs.debug_warnings(types.SimpleNamespace(cuda=cuda), lambda f, w: None):
        raise ValueError("boom")
    assert cuda.set == ["warn", 2]
    assert torch_syncs.debug_mode_available(torch) is torch.cuda.is_available()


def debug_step() -> None:
    torch_model.quiet_op()
    torch_model.spin_op()  # synchronizes: a spin no hook covers


@pytest.mark.skipif(not CAN_WATCH, reason="the frame fallback needs per-thread context switches (Linux)")
def test_the_debug_modes_warning_makes_the_fallback_report_a_spinning_wait_at_its_line_with_its_time():
    """A wait that spins is invisible to the fallback alone (it looks for sleeps); torch's warning names it."""
    spin_line = inspect.getsourcelines(debug_step)[1] + 2
    alone = census.take(debug_step, (), torch_model.FRAMEWORK, rounds=6)
    assert alone.points == ()
    seen = census.take(debug_step, (), torch_model.FRAMEWORK, rounds=6, witness=torch_model.witness)
    (point,) = seen.points
    assert (point.line, point.kind, point.calls_per_step) == (spin_line, "unattributed", 1)
    assert point.call == "tests.backends.torch_model.spin_op"
    assert torch_model.SPIN_S * 0.9 <= point.wait_s_per_step <= torch_model.SPIN_S * 4
    assert torch_model.CUDA.mode == 0  # turned off after each run
    assert "own sync warnings" in seen.coverage


def test_a_wait_a_hook_covers_and_the_debug_mode_warns_about_is_counted_once_as_the_hooks():
    hooks = (SyncHook(torch_model, "spin_op", "conversion", "torch_model.spin_op"),)
    (point,) = census.take(debug_step, hooks, torch_model.FRAMEWORK, rounds=6, witness=torch_model.witness).points
    assert (point.kind, point.call, point.calls_per_step) == ("conversion", "torch_model.spin_op", 1)


def test_the_backend_has_no_witness_without_cuda():
    assert TorchBackend().sync_witness("cpu") is None
    assert TorchBackend().sync_witness("cuda:0") is None  # a CPU-only torch: no debug mode to turn on
