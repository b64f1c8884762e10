"""The user's step captured for `run --bound --bound-verify` (issue 52): jax.jit, torch.compile, a CUDA graph.

The ceiling of `--bound` says what cutting host work could buy; `--bound-verify` runs that counterfactual where the
backend can capture the step (Backend.capture_step calls one of these) and times it (measure.verification). A
capture that would not run the same step is refused in one line saying why, never timed:

- jit (JAX): the arrays the step closes over directly are passed to the jitted step as arguments (lifted), as a
  training step takes its state: closed over, they would be constants of the compiled program, which XLA may fold
  (a planted step's product of a closure constant compiled to one copy of a constant). A step that rebinds a
  variable outside itself (`nonlocal w`: STORE_DEREF in its code, or `global`) would have the rebinding traced once
  and dropped, and so would a step that stores an array in a holder it reaches (`state["w"] = ...` in a dict it
  closes over, `self.w = ...`): the trace leaves a tracer there, found after it, and the holder is put back as it
  was (backends.step_state), so the case's own rounds still run the step; a step that reads a value on the host
  (`.item()`, `float(x)`) cannot be traced (the tracer error's frame in the user's file is named: often a wait the
  census lists); a step that returns no arrays has nothing left
  after tracing; and a jitted result that is not allclose to the eager step's is a different step.
- compile (torch): torch.compile keeps Python side effects through its graph breaks; its first call compiles,
  which on a CPU needs a C++ compiler (refused without one) and can take long (bounded by the case's timeout_s).
  Its step is a CompiledStep (backends.compile_watch): dynamo's warnings are kept off the terminal for its whole
  life, and a step that hit dynamo's recompile limit in the rounds (it ran eagerly past it) is refused by its
  `finish`, which the case calls after its rounds.
- graph (torch on CUDA): the step warmed up on a side stream, captured once with torch.cuda.graph, then replayed:
  the replay reruns the captured kernels on the same memory and nothing of the step's Python, so a rebinding
  step is refused as for jit, and a host read fails the capture (refused, its line named).

Each returns (callable, None) or (None, why); torch.compile's (callable, caveat) where its first call met graph
breaks (the compiled step runs partly eagerly: said in one line of the row's notes, its warnings kept off the
terminal). Frameworks are imported here, lazily, by the backend that asks.
"""

from __future__ import annotations

import dis
import os
import shutil
import traceback
import types
from typing import Any, Callable

from asyncbench.backends import compile_watch, step_state

Step = Callable[[], Any]
#: the host reads JAX cannot trace, by their class names (jax.errors): what a `.item()` or `float(x)` raises
TRACER_ERRORS = (
    "ConcretizationTypeError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
)
#: allclose's tolerances for a jitted step against the eager one: XLA may fuse and reorder float ops (float32's
#: rounding, some 1e-6 relative per op, over a step of tens of ops)
RTOL, ATOL = 1e-4, 1e-5
#: the places a refusal names where a step stores traced values outside itself (the rest counted): one line
STORES_NAMED = 3
#: warm-up calls on a side stream before a CUDA graph's capture (torch's own make_graphed_callables takes 3): lazy
#: initialisation (cuBLAS handles, the allocator's pools) must not happen inside the capture
GRAPH_WARMUP = 3


def _code(step: Step) -> types.CodeType | None:
    """The code object a step call runs (a function, a bound method, an object's __call__), or None."""
    function = getattr(step, "__func__", step)
    code = getattr(function, "__code__", None)
    if code is None:
        code = getattr(type(step).__dict__.get("__call__"), "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def rebinding(step: Step) -> str | None:
    """Why a step cannot be captured faithfully because it rebinds a variable outside itself ('assigns to the
    enclosing variable w (nonlocal) at train.py:14'), or None. Its nested functions' code is read too."""
    code = _code(step)
    if code is None:
        return None
    pending = [code]
    while pending:
        current = pending.pop()
        line = current.co_firstlineno
        for instruction in dis.get_instructions(current):
            positions = getattr(instruction, "positions", None)
            line = positions.lineno if positions is not None and positions.lineno else line
            outer = instruction.opname == "STORE_DEREF" and current is code and instruction.argval in code.co_freevars
            if outer or instruction.opname == "STORE_GLOBAL":
                kind, whose = ("nonlocal", "enclosing") if outer else ("global", "global")
                at = _where(current.co_filename, line)
                return f"assigns to the {whose} variable {instruction.argval} ({kind}) at {at}"
        pending.extend(const for const in current.co_consts if isinstance(const, types.CodeType))
    return None


def _where(filename: str, line: int) -> str:
    return f"{os.path.basename(filename)}:{line}"


def user_line(error: BaseException, step: Step) -> str | None:
    """The line of the user's file the error came through last ('train.py:12: loss.item()'), or None."""
    code = _code(step)
    if code is None:
        return None
    found = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == code.co_filename:
            found = f"{_where(frame.filename, frame.lineno or 0)}: {(frame.line or '').strip()}"
    return found


def _refused_by(error: BaseException, step: Step, what: str) -> str:
    """One line for a capture that raised: what, the user's line where known, the error's first line."""
    where = user_line(error, step)
    first = (str(error).strip().splitlines() or [""])[0][:160]
    at = f" at {where}" if where else ""
    return f"{what}{at} ({type(error).__name__}: {first})"


def jax_jit(step: Step) -> tuple[Step | None, str | None]:
    """jax.jit of the step, checked against the eager step once (module docstring), or None with why."""
    import jax
    import numpy

    rebinds = rebinding(step)
    if rebinds is not None:
        return None, f"not jitted: the step {rebinds}; jit would trace it once and drop the rebinding"
    eager = step()
    jitted = lifted(step, jax.Array, jax.jit)
    held = step_state.taken(step)

    def is_traced(value: Any) -> bool:
        return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(value))

    try:
        captured = jitted()
    except Exception as error:  # noqa: BLE001 - a tracer error is the user's host read; anything else, said as it is
        held.put_back(is_traced)  # what it stored before it failed: the eager step's next call would read a tracer
        if type(error).__name__ in TRACER_ERRORS:
            return None, _refused_by(error, step, "not jitted: the step reads a value on the host")
        return None, _refused_by(error, step, "not jitted: tracing the step failed")
    stored = held.traced(is_traced)
    if stored:
        held.put_back(is_traced)
        places = ", ".join(stored[:STORES_NAMED]) + (f" and {len(stored) - STORES_NAMED} more" if len(stored) > STORES_NAMED else "")
        return None, f"not jitted: the step stores a traced value outside itself ({places}); jit would trace the store once and drop it"
    leaves, eager_leaves = jax.tree_util.tree_leaves(captured), jax.tree_util.tree_leaves(eager)
    if not leaves or not all(isinstance(leaf, jax.Array) for leaf in leaves):
        return None, "not jitted: a jitted step must return its arrays (it returned none), or tracing leaves nothing to run"
    if len(leaves) != len(eager_leaves) or not all(
        numpy.shape(a) == numpy.shape(b) and numpy.allclose(numpy.asarray(a), numpy.asarray(b), rtol=RTOL, atol=ATOL)
        for a, b in zip(leaves, eager_leaves, strict=True)
    ):
        return None, f"not jitted: the jitted step's result is not the eager step's (allclose, rtol {RTOL:g}, atol {ATOL:g})"
    return jitted, None


def lifted(step: Step, array_type: type, jit: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Step:
    """`jit` of the step with the arrays it closes over directly (`array_type`) passed as arguments: a zero-argument
    callable that calls the jitted function with them. A step without such arrays (or not a plain function): `jit` of
    it as it is. Arrays further in (in an object, another function's closure) stay constants."""
    closure = step.__closure__ if isinstance(step, types.FunctionType) else None
    try:
        values = [cell.cell_contents for cell in closure or ()]
    except ValueError:  # an empty cell (a variable not yet assigned): the step as it is
        values = []
    places = [index for index, value in enumerate(values) if isinstance(value, array_type)]
    if closure is None or not places:
        return jit(step)
    function: types.FunctionType = step  # type: ignore[assignment]  # checked above

    def with_arrays(*arrays: Any) -> Any:
        cells = list(closure)
        for index, array in zip(places, arrays, strict=True):
            cells[index] = types.CellType(array)
        rebuilt = types.FunctionType(function.__code__, function.__globals__, function.__name__, function.__defaults__, tuple(cells))
        return rebuilt()

    compiled = jit(with_arrays)
    arrays = tuple(values[index] for index in places)
    return lambda: compiled(*arrays)


def c_compiler() -> str | None:
    """The C++ compiler torch.compile's CPU code would use (CXX, else c++/g++/clang++ on PATH), or None."""
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return name
    return None


def torch_compile(step: Step, device: str, compile_: Callable[[Step], Step] | None = None) -> tuple[Step | None, str | None]:
    """torch.compile of the step, compiled by its first call here (never inside a timed or verification sample),
    as a CompiledStep whose `finish` the case calls after its rounds (dynamo's logger put back; a step that hit the
    recompile limit refused), or None with why. `compile_`: torch.compile (a test's fake in its place)."""
    if compile_ is None:
        if not device.startswith("cuda") and c_compiler() is None:
            return None, "not compiled: torch.compile on a CPU needs a C++ compiler (CXX, c++, g++), and none is on PATH"
        import torch

        compile_ = torch.compile
    watch = compile_watch.Watch()
    watch.start()  # ended by the case after its rounds (CompiledStep.finish), or here where the capture is refused
    try:
        compiled = compile_(step)
        compile_watch.first_call(compiled, watch)
    except Exception as error:  # noqa: BLE001 - the compiler's failure, said in one line
        watch.stop()
        return None, _refused_by(error, step, "not compiled: torch.compile of the step failed")
    captured = compile_watch.CompiledStep(compiled)
    captured.watch = watch
    return captured, watch.breaks()


def torch_graph(step: Step, device: str, torch: Any = None) -> tuple[Step | None, str | None]:
    """A CUDA graph of the step: GRAPH_WARMUP calls on a side stream, one capture (torch.cuda.graph), and a callable
    that replays it and returns the captured output; or None with why. `torch`: the module (a test's mock)."""
    if not device.startswith("cuda"):
        return None, "not graphed: CUDA graphs need a CUDA device"
    rebinds = rebinding(step)
    if rebinds is not None:
        return None, f"not graphed: the step {rebinds}; a replay reruns the kernels, not the rebinding"
    if torch is None:
        import torch
    index = int(device.partition(":")[2] or 0)
    try:
        with torch.cuda.device(index):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(GRAPH_WARMUP):
                    step()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                output = step()
    except Exception as error:  # noqa: BLE001 - a host read (.item()) is not permitted while a stream captures
        return None, _refused_by(error, step, "not graphed: capturing the step failed")

    def replay() -> Any:
        graph.replay()
        return output

    return replay, None
