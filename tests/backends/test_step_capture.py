"""The step captured for `run --bound-verify` (backends.step_capture): a pure JAX step jitted and checked against the
eager one; a step that rebinds an outer variable, reads a value on the host or returns nothing refused in one line
naming why and, where it can, the line; torch.compile and CUDA graphs through fakes (no compile here, no GPU)."""

from __future__ import annotations

import contextlib
import types
from typing import Any, Callable

import pytest

from asyncbench.backends import get_backend, step_capture


def _jnp() -> Any:
    return pytest.importorskip("jax.numpy")


def test_a_pure_jax_step_is_jitted_and_its_result_is_the_eager_steps() -> None:
    jnp = _jnp()
    x = jnp.ones((16, 16))
    jitted, why = get_backend("jax").capture_step(lambda: (x @ x).sum(), "cpu", "jit")
    assert why is None
    assert jitted is not None
    assert float(jitted()) == 16.0 * 16 * 16


def test_a_step_that_rebinds_a_nonlocal_is_refused_naming_the_variable_and_its_line() -> None:
    jnp = _jnp()
    w = jnp.ones((4,))

    def step() -> Any:
        nonlocal w
        w = w * 0.5
        return w

    line = step.__code__.co_firstlineno + 2
    jitted, why = step_capture.jax_jit(step)
    assert jitted is None
    assert why == (
        f"not jitted: the step assigns to the enclosing variable w (nonlocal) at test_step_capture.py:{line}; "
        "jit would trace it once and drop the rebinding"
    )


COUNT = 0


def test_a_step_that_rebinds_a_global_is_refused() -> None:
    def step() -> Any:
        global COUNT
        COUNT += 1
        return COUNT

    assert "global variable COUNT (global)" in (step_capture.rebinding(step) or "")


def test_a_step_that_reads_a_value_on_the_host_is_refused_naming_its_line() -> None:
    jnp = _jnp()
    x = jnp.ones((4,))

    def step() -> Any:
        y = x * 2
        return y + float(y.sum())  # the host read

    line = step.__code__.co_firstlineno + 2
    jitted, why = step_capture.jax_jit(step)
    assert jitted is None
    assert why is not None
    assert why.startswith(f"not jitted: the step reads a value on the host at test_step_capture.py:{line}: return y + float(y.sum())")
    assert "ConcretizationTypeError" in why


def test_a_step_whose_own_local_is_captured_by_a_nested_function_is_not_refused() -> None:
    def step() -> Any:
        total = 1
        return (lambda: total)()

    assert step_capture.rebinding(step) is None


def test_a_step_that_returns_no_arrays_is_refused() -> None:
    jnp = _jnp()
    x = jnp.ones((4,))
    jitted, why = step_capture.jax_jit(lambda: None if x is None else None)
    assert jitted is None
    assert why is not None
    assert "must return its arrays" in why


def test_a_jitted_step_whose_result_differs_from_the_eager_steps_is_refused() -> None:
    jnp = _jnp()
    calls = []

    def step() -> Any:
        calls.append(1)  # runs once eagerly, once traced: the two results differ
        return jnp.ones((2,)) * len(calls)

    jitted, why = step_capture.jax_jit(step)
    assert jitted is None
    assert why is not None
    assert "not the eager step's (allclose" in why


def test_jax_captures_with_jit_only_and_numpy_not_at_all() -> None:
    assert get_backend("jax").capture_step(lambda: None, "cpu", "compile") == (
        None,
        "--bound-verify compile: jax captures a step with jit only",
    )
    captured, why = get_backend("numpy").capture_step(lambda: None, "cpu", "jit")
    assert captured is None
    assert why is not None
    assert "numpy cannot capture" in why


def test_torch_compile_compiles_by_a_first_call_and_a_failure_is_one_line() -> None:
    compiled_calls: list[str] = []

    def fake_compile(step: Callable[[], Any]) -> Callable[[], Any]:
        def compiled() -> Any:
            compiled_calls.append("call")
            return step()

        return compiled

    captured, why = step_capture.torch_compile(lambda: 3, "cpu", compile_=fake_compile)
    assert why is None
    assert captured is not None
    assert compiled_calls == ["call"]

    def broken(step: Callable[[], Any]) -> Callable[[], Any]:
        def compiled() -> Any:
            raise RuntimeError("inductor: no backend\nmore")

        return compiled

    captured, why = step_capture.torch_compile(lambda: 3, "cpu", compile_=broken)
    assert captured is None
    assert why is not None
    assert why.startswith("not compiled: torch.compile of the step failed")
    assert why.endswith("(RuntimeError: inductor: no backend)")  # the error's first line only


def test_torch_compile_on_a_cpu_without_a_cpp_compiler_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(step_capture, "c_compiler", lambda: None)
    captured, why = step_capture.torch_compile(lambda: 3, "cpu")
    assert captured is None
    assert why is not None
    assert "needs a C++ compiler" in why


def test_a_cuda_graph_needs_a_cuda_device_and_refuses_a_rebinding_step() -> None:
    assert step_capture.torch_graph(lambda: 1, "cpu") == (None, "not graphed: CUDA graphs need a CUDA device")
    n = 0

    def step() -> int:
        nonlocal n
        n += 1
        return n

    captured, why = step_capture.torch_graph(step, "cuda:0")
    assert captured is None
    assert why is not None
    assert why.startswith("not graphed: the step assigns to the enclosing variable n")


class _FakeCuda:
    """torch.cuda as torch_graph uses it: streams, a device scope, and a graph that records what its capture ran."""

    def __init__(self, fail_capture: bool = False) -> None:
        self.log: list[str] = []
        self.fail_capture = fail_capture
        self.capturing = False

    def device(self, index: int) -> Any:
        self.log.append(f"device {index}")
        return contextlib.nullcontext()

    def Stream(self) -> Any:  # noqa: N802 - torch's name
        return types.SimpleNamespace(wait_stream=lambda other: self.log.append("side waits"))

    def current_stream(self) -> Any:
        return types.SimpleNamespace(wait_stream=lambda other: self.log.append("current waits"))

    def stream(self, stream: Any) -> Any:
        return contextlib.nullcontext()

    def CUDAGraph(self) -> Any:  # noqa: N802 - torch's name
        return types.SimpleNamespace(replay=lambda: self.log.append("replay"))

    @contextlib.contextmanager
    def graph(self, graph: Any) -> Any:
        self.capturing = True
        self.log.append("capture")
        try:
            yield
            if self.fail_capture:
                raise RuntimeError("operation not permitted when stream is capturing")
        finally:
            self.capturing = False


def test_a_cuda_graph_is_warmed_up_captured_once_and_replayed_returning_the_captured_output() -> None:
    cuda = _FakeCuda()
    calls: list[bool] = []

    def step() -> str:
        calls.append(cuda.capturing)
        return "out"

    replay, why = step_capture.torch_graph(step, "cuda:1", torch=types.SimpleNamespace(cuda=cuda))
    assert why is None
    assert replay is not None
    assert calls == [False] * step_capture.GRAPH_WARMUP + [True]  # warm-up outside the capture, then one captured call
    assert cuda.log == ["device 1", "side waits", "current waits", "capture"]
    assert replay() == "out"
    assert cuda.log[-1] == "replay"
    assert len(calls) == step_capture.GRAPH_WARMUP + 1


def test_a_cuda_graph_whose_capture_fails_is_refused_naming_the_error() -> None:
    cuda = _FakeCuda(fail_capture=True)
    replay, why = step_capture.torch_graph(lambda: 1, "cuda:0", torch=types.SimpleNamespace(cuda=cuda))
    assert replay is None
    assert why is not None
    assert why.startswith("not graphed: capturing the step failed")
    assert "stream is capturing" in why


def test_cupy_says_it_does_not_capture() -> None:
    from asyncbench.backends.cupy_backend import CupyBackend

    captured, why = CupyBackend().capture_step(lambda: 1, "cuda:0", "graph")
    assert captured is None
    assert why is not None
    assert "not supported on cupy" in why


def test_the_arrays_a_step_closes_over_are_passed_to_the_jitted_step_not_baked_in() -> None:
    jax = pytest.importorskip("jax")
    x = jax.numpy.ones((8, 8))
    scale = 2.0
    seen: list[Any] = []

    def jit(function: Callable[..., Any]) -> Callable[..., Any]:
        def traced(*arrays: Any) -> Any:
            seen.append(arrays)
            return jax.jit(function)(*arrays)

        return traced

    jitted = step_capture.lifted(lambda: (x @ x) * scale, jax.Array, jit)
    assert float(jitted().sum()) == 8 * 8 * 8 * 2.0
    (arrays,) = seen
    assert len(arrays) == 1  # x, not the float
    assert arrays[0] is x
    assert step_capture.lifted(lambda: 3, jax.Array, lambda f: f)() == 3  # nothing to lift: the step as it is


def test_torch_compiles_graph_breaks_are_one_line_of_the_notes_not_warnings_on_the_terminal(capfd: pytest.CaptureFixture[str]) -> None:
    """A step with `.item()` compiled: dynamo printed some 14 lines ("Graph break from `Tensor.item()`...") to the
    terminal. The compiled step still runs the same computation, partly eagerly: the capture says so in one line."""
    torch = pytest.importorskip("torch")
    x = torch.ones(8)

    def step() -> Any:
        total = (x * 2).sum()
        if total.item() > 0:  # a host read: dynamo breaks the graph here
            return x + 1
        return x - 1

    compile_ = pytest.importorskip("torch._dynamo").reset  # every test compiles afresh
    compile_()
    captured, said = step_capture.torch_compile(step, "cpu", compile_=lambda f: torch.compile(f, backend="eager"))
    assert captured is not None
    assert said is not None
    assert said.startswith("compile: "), said
    assert "graph break(s): the compiled step runs partly eagerly; e.g. " in said
    assert "\n" not in said
    assert "Graph break" not in capfd.readouterr().err
    assert float(captured().sum()) == 16.0
