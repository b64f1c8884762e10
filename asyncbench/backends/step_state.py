"""The state a step keeps outside itself, put back after a trace (`run --bound-verify jit`: backends.step_capture).

Tracing a step runs its Python once with tracers in place of arrays. A step that keeps its state in a holder it
reaches (`state["w"], loss = update(state["w"], x)`: a dict it closes over; `self.w = ...` on the object it is a
method of; a list or an object's attribute it names as a global) stores a tracer there. jit would keep that store
out of the compiled program (traced once, then dropped: not the step), and the eager step's next call would read
the tracer and fail (UnexpectedTracerError, dozens of lines), which cost the case its plain timings. So the holders
are copied (shallowly) before the trace, a traced value found in one after it is named, and every holder it was
found in is put back as it was: the capture is refused in one line, and the case's rounds run the step as before.

Holders are dicts, lists and objects' attribute dicts, found from the step's closure cells, its bound object (or
the step itself where it is an object with __call__) and the globals its code names, and within those down to
DEPTH levels. Modules, classes and functions are not holders (their state is the program's, not the step's).
"""

from __future__ import annotations

import collections
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterator

#: how deep into holders the copy looks: a dict the step closes over is 1, an optimiser object's dict of moments 3
#: (`self.opt.state["m"]`); a store deeper than that is still found (a traced leaf under a holder's entry names the
#: entry), and put back with the holder it lies under
DEPTH = 3
#: at most this many holders are copied: a step that closes over a large structure (a list of a million samples is
#: one holder; a dict of ten thousand dicts would be ten thousand) is copied within a few milliseconds
MOST_HOLDERS = 1000
#: entries of a holder looked into for holders further down (a list of a million samples is copied, not walked)
MOST_ENTRIES = 1000

#: what is never a holder, nor looked into: the program's own state
_NOT_STATE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.CodeType)


@dataclass(frozen=True)
class _Held:
    """A holder (a dict, a list, an object's attribute dict), the name the step reaches it by, and its copy."""

    holder: dict[Any, Any] | list[Any]
    name: str
    copy: dict[Any, Any] | list[Any]
    attributes: bool  # an object's attribute dict: its entries read `.w`, not `['w']`


@dataclass(frozen=True)
class Snapshot:
    """The holders a step reaches, copied before a trace (`taken`)."""

    held: tuple[_Held, ...]

    def traced(self, is_traced: Callable[[Any], bool]) -> list[str]:
        """The places a traced value was stored since the copy ("state['w']"), in the order found."""
        return [
            f"{held.name}{_key(key, held.attributes)}" for held in self.held for key, value in _entries(held.holder) if is_traced(value)
        ]

    def put_back(self, is_traced: Callable[[Any], bool]) -> None:
        """Every holder a traced value was stored in, as it was when copied (other holders are left as the step left
        them: an eager call's effects, which the trace's were alike)."""
        for held in self.held:
            if any(is_traced(value) for _, value in _entries(held.holder)):
                if isinstance(held.holder, dict):
                    held.holder.clear()
                    held.holder.update(held.copy)
                else:
                    held.holder[:] = held.copy


def taken(step: Callable[[], Any]) -> Snapshot:
    """The holders the step reaches (module docstring), each copied shallowly."""
    found: list[_Held] = []
    seen: set[int] = set()
    pending = collections.deque((name, value, 1) for name, value in _roots(step))
    while pending and len(found) < MOST_HOLDERS:
        name, value, depth = pending.popleft()
        holder = _holder(value)
        if holder is None or id(holder) in seen:
            continue
        seen.add(id(holder))
        attributes = not isinstance(value, (dict, list))
        found.append(_Held(holder, name, dict(holder) if isinstance(holder, dict) else list(holder), attributes))
        if depth < DEPTH:
            for count, (key, entry) in enumerate(_entries(holder)):
                if count >= MOST_ENTRIES:
                    break
                pending.append((f"{name}{_key(key, attributes)}", entry, depth + 1))
    return Snapshot(tuple(found))


def _roots(step: Callable[[], Any]) -> Iterator[tuple[str, Any]]:
    """What the step reaches by name: its closure's variables, its bound object, the globals its code names."""
    bound = getattr(step, "__self__", None)
    if bound is not None:
        yield "self", bound
    function = getattr(step, "__func__", step)
    if not isinstance(function, types.FunctionType):
        if not isinstance(step, _NOT_STATE):  # an object with __call__: its attributes are its state
            yield "self", step
        return
    code = function.__code__
    for name, cell in zip(code.co_freevars, function.__closure__ or (), strict=False):
        try:
            yield name, cell.cell_contents
        except ValueError:  # an empty cell (a variable not yet assigned)
            continue
    for name in code.co_names:
        if name in function.__globals__:
            yield name, function.__globals__[name]


def _holder(value: Any) -> dict[Any, Any] | list[Any] | None:
    """The mutable container a value keeps entries in: a dict, a list, an object's attribute dict; None otherwise."""
    if isinstance(value, (dict, list)):
        return value
    if isinstance(value, _NOT_STATE):
        return None
    attributes = getattr(value, "__dict__", None)
    return attributes if type(attributes) is dict else None


def _entries(holder: dict[Any, Any] | list[Any]) -> list[tuple[Any, Any]]:
    return list(holder.items()) if isinstance(holder, dict) else list(enumerate(holder))


def _key(key: Any, attributes: bool) -> str:
    """How an entry is reached: "['w']", '[0]' (a dict's key, a list's index), '.w' (an object's attribute)."""
    return f".{key}" if attributes else f"[{key!r}]"
