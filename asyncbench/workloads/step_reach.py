"""Which frameworks a user's step works on, so that its rows carry only backends its code touches.

A step made with `@asyncbench.step` runs on every backend a config or the
command line names, and each row is labelled with its backend; a torch step
run on numpy and jax would give three rows timing the same torch code, the
"jax" one with JAX's barrier added. Unless the step declares its backends
(`@asyncbench.step(backends=("torch",))`), two looks decide where it runs:

- `named` (before anything of the step runs, so a case can be skipped with
  a reason): the frameworks its code names — the modules it imports, the
  globals it loads (a module, a framework function, a model), in its own
  code, the functions nested in it, and the helper functions and classes it
  names from its own folder. numpy named beside another framework is taken
  as that one's helper (data preparation, a shape), not as a framework the
  step runs on. A step that names none (it reaches arrays only through
  `backend`: `backend.random`, `backend.namespace()`) is backend-neutral and
  runs on each. So is one that names only numpy while it takes its arrays
  from `backend` (BACKEND_ARRAYS): numpy is then the host's array library
  every backend converts to (`numpy.asarray(x @ x)`, a host copy that is the
  commonest hidden wait there is), not the framework the step's work runs
  in; a step that builds its arrays with numpy and asks `backend` for none
  times numpy code, and runs on numpy only. A converting step is not run
  where numpy misreads the backend's arrays (NUMPY_MISREADS: MXNet's);
  `backend.to_host(x)` converts on every backend.
- `held` (once the step function has set up, on a case that was not
  skipped): the frameworks of the objects the returned callable holds — its
  closure, defaults, bound instance. A step whose code names no framework
  but holds another framework's tensors (built by a library outside its
  folder) is refused there, as an error row saying how to declare it.

Both read code and objects only; no framework is imported here.
"""

from __future__ import annotations

import dis
import functools
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from asyncbench.backends import BACKENDS
from asyncbench.backends.base import module_roots

# How many code objects `named` reads at most: a step and its own helpers are a few dozen; the bound keeps a step
# whose folder holds a large library from slowing every case's start.
MAX_CODE_OBJECTS = 500
# The framework everyone's code uses beside its own (data preparation, shapes, host copies): named together with
# another framework, that one is the step's.
HELPER_FRAMEWORK = "numpy"
# The Backend methods that give a step the backend's own arrays or functions (Backend.random, ones, namespace,
# compiled, pinned_empty): a step that calls one on its `backend` works on each backend's arrays, and numpy in its code
# converts them (to the host, from data prepared there). `backend.barrier`, `backend.name` make no array: a step that
# uses only those beside numpy's arrays times numpy code.
BACKEND_ARRAYS = frozenset({"random", "ones", "namespace", "compiled", "pinned_empty"})
# The backends whose arrays numpy misreads rather than converts or refuses: an MXNet NDArray has no __array__, so
# numpy.asarray reads it as nested sequences, element by element, into an object array (0.29 s for a 16×16 one; a
# 256² step's census timed out at 300 s). A row of a step that converts with numpy there would time that. CuPy's
# arrays and torch's on a GPU refuse the conversion at once, a TypeError naming the line: that error row says it.
NUMPY_MISREADS = frozenset({"mxnet"})
# Folders that hold installed packages, never a user's helpers (a virtual environment inside the project).
INSTALLED = ("site-packages", "dist-packages")


def backends_of(roots: frozenset[str] | set[str]) -> frozenset[str]:
    """The backends whose framework owns one of these top-level modules (Backend.owned_modules)."""
    return frozenset(name for name, backend in BACKENDS.items() if not roots.isdisjoint(backend.owned_modules()))


def _loads(code: types.CodeType) -> Iterator[tuple[str, str]]:
    """('global', name) for each global a code object loads, ('import', module) for each module it imports."""
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(instruction.argval, str):
            yield "global", instruction.argval
        elif instruction.opname == "IMPORT_NAME" and isinstance(instruction.argval, str):
            yield "import", instruction.argval


def _asks_backend_for_arrays(code: types.CodeType, parameter: str) -> bool:
    """Whether a code object calls one of BACKEND_ARRAYS on the variable `parameter` (the step's `backend`, read
    by its own name: in the step, a function nested in it, or a helper of the step's folder whose parameter is
    named alike)."""
    previous: Any = None
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and instruction.argval in BACKEND_ARRAYS and previous == parameter:
            return True
        loaded = instruction.argval if instruction.opname.startswith(("LOAD_FAST", "LOAD_DEREF")) else None
        previous = loaded[-1] if isinstance(loaded, tuple) else loaded  # LOAD_FAST_LOAD_FAST (3.13) loads two
    return False


def _in_folder(file: str | None, folder: Path) -> bool:
    if not file or any(part in INSTALLED for part in Path(file).parts):
        return False
    return Path(file).resolve().is_relative_to(folder)


def _own_code(value: Any, folder: Path) -> list[tuple[types.CodeType, dict[str, Any]]]:
    """The code (with its globals) of a function, a class's methods or an instance's class's methods, when they
    are defined in the step's folder: the user's helpers, read like the step itself."""
    if isinstance(value, types.FunctionType):
        return [(value.__code__, value.__globals__)] if _in_folder(value.__code__.co_filename, folder) else []
    cls = value if isinstance(value, type) else type(value)
    module = sys.modules.get(cls.__module__)
    if module is None or not _in_folder(getattr(module, "__file__", None), folder):
        return []
    found = []
    for attribute in vars(cls).values():
        function = getattr(attribute, "__func__", None) or getattr(attribute, "fget", None) or attribute
        if isinstance(function, types.FunctionType):
            found.append((function.__code__, function.__globals__))
    return found


@dataclass(frozen=True)
class Reach:
    """What a step function's code reaches: the frameworks it names, and whether it asks its `backend` for arrays."""

    #: the backends whose framework the code names, numpy included
    frameworks: frozenset[str] = frozenset()
    #: whether it calls one of BACKEND_ARRAYS on its `backend`
    asks_backend: bool = False

    @property
    def backends(self) -> frozenset[str]:
        """The backends the step runs on by its code (see the module's docstring); empty: each (backend-neutral)."""
        if len(self.frameworks) > 1 or self.converts_with_numpy:
            return self.frameworks - {HELPER_FRAMEWORK}  # numpy beside another framework, or beside the backend's arrays
        return self.frameworks

    @property
    def converts_with_numpy(self) -> bool:
        """A backend-neutral step that names numpy: its arrays are the backend's, and numpy converts them."""
        return self.asks_backend and self.frameworks == {HELPER_FRAMEWORK}


def reach(function: Callable[..., Any]) -> Reach:
    """What the step function's code reaches (see the module's docstring)."""
    code = getattr(function, "__code__", None)
    if code is None:  # a callable object, a builtin: nothing to read
        return Reach()
    folder = Path(code.co_filename).resolve().parent
    parameter = code.co_varnames[0] if code.co_argcount else None  # the step's `backend`, whatever its name
    asks_backend = False
    roots: set[str] = set()
    seen: set[int] = set()
    todo: list[tuple[types.CodeType, dict[str, Any]]] = [(code, getattr(function, "__globals__", {}))]
    for default in (*(getattr(function, "__defaults__", None) or ()), *(getattr(function, "__kwdefaults__", None) or {}).values()):
        roots |= module_roots(default)
    while todo and len(seen) < MAX_CODE_OBJECTS:
        current, namespace = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        asks_backend = asks_backend or (parameter is not None and _asks_backend_for_arrays(current, parameter))
        todo.extend((nested, namespace) for nested in current.co_consts if isinstance(nested, types.CodeType))
        for kind, name in _loads(current):
            if kind == "import":
                roots.add(name.partition(".")[0])
            elif name in namespace:  # else a builtin
                value = namespace[name]
                roots |= module_roots(value)
                todo.extend(_own_code(value, folder))
    return Reach(backends_of(roots), asks_backend)


def named(function: Callable[..., Any]) -> frozenset[str]:
    """The backends whose framework the step function's code names (see the module's docstring); empty: none,
    the step is backend-neutral."""
    return reach(function).backends


def _contents(value: Any) -> list[Any]:
    """A container's items (a list, tuple, set or dict's values), else the value itself."""
    if isinstance(value, dict):
        return [value, *value.values()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [value, *value]
    return [value]


def held(run_step: Callable[..., Any]) -> frozenset[str]:
    """The backends whose framework owns an object the step's callable holds: its closure's cells, its defaults, the
    instance of a bound method (and that instance's attributes), a partial's function and arguments — and the
    items of a list, tuple or dict among them."""
    objects: list[Any] = []
    target = run_step
    if isinstance(target, functools.partial):
        objects += [target.func, *target.args, *target.keywords.values()]
        target = target.func
    instance = getattr(target, "__self__", None)
    if instance is not None and not isinstance(instance, types.ModuleType):
        objects += [instance, *getattr(instance, "__dict__", {}).values()]
    for cell in getattr(target, "__closure__", None) or ():
        try:
            objects.append(cell.cell_contents)
        except ValueError:  # an empty cell: a name bound after the callable was made
            continue
    objects += [*(getattr(target, "__defaults__", None) or ())]
    roots: set[str] = set()
    for value in objects:
        for item in _contents(value):
            roots |= module_roots(item)
    return backends_of(roots)
