"""Workloads from outside the package: a file, a module, or an installed plugin.

Three ways to name one, everywhere a built-in name goes (`workload:` in a
config, `-w` on the command line):
- `path/to/file.py:Name` — a file, relative to the config file's folder (to
  the working directory on the command line);
- `package.module:Name` — an importable module;
- `NAME` — an installed plugin: an entry point of the group
  `asyncbench.workloads` (`NAME = package.module:Name`).
`Name` is a Workload subclass, a Workload instance (what `@asyncbench.step`
makes), or a plain step function (taken as `step(function)`).

A reference resolves to a canonical one — an absolute file path or a module
path, plus the attribute — which is what experiments, cases and worker
processes carry: a worker imports the same file or module again (user
workloads are not pickled). Loaded workloads are kept here, apart from the
built-in ones (`load`'s own cache, by canonical reference): the built-in
registry stays read-only, so a workload counts as built in only by where it
came from (`is_built_in`), and the runner never gives a user's workload the
settings asyncbench's own run with (full float32 precision).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import inspect
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asyncbench.errors import InputError, suggestion
from asyncbench.workloads import BUILT_IN, elsewhere
from asyncbench.workloads.base import Workload

ENTRY_POINT_GROUP = "asyncbench.workloads"
MODULE_PATH = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


@dataclass(frozen=True)
class Plugin:
    """An installed plugin: its entry point and the distribution that provides it."""

    name: str
    target: str  # package.module:Name
    distribution: str


def is_reference(text: str) -> bool:
    """Whether a workload name is a file or module reference (built-in and plugin names have no ':')."""
    return ":" in text or text.endswith(".py")


def plugins() -> dict[str, Plugin]:
    """Installed plugins by name (the entry point group `asyncbench.workloads`)."""
    found: dict[str, Plugin] = {}
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(entry, "dist", None)
        distribution = dist.name if dist is not None else "?"
        found.setdefault(entry.name, Plugin(entry.name, entry.value, distribution))
    return found


def canonical(text: str, base_dir: Path) -> str:
    """The canonical reference for a name as the user wrote it: '/abs/file.py:Name' or 'pkg.mod:Name'.

    Raises InputError (one line, saying what to fix) for a malformed reference or a missing file.
    """
    if not is_reference(text):
        plugin = plugins().get(text)
        if plugin is None:
            raise InputError(f"unknown workload {text!r}")
        return plugin.target
    where, colon, attribute = text.rpartition(":")
    if not colon and text.endswith(".py") or colon and not attribute and where.endswith(".py"):
        raise InputError(_name_one(where or text, base_dir))
    if not colon or not attribute.isidentifier() or not where:
        raise InputError("a workload reference is path/to/file.py:Name or package.module:Name")
    if where.endswith(".py") or "/" in where or "\\" in where:
        path = (base_dir / where).expanduser().resolve()
        if not path.is_file():
            raise InputError(f"no such file {path}")
        return f"{path}:{attribute}"
    if not MODULE_PATH.match(where):
        raise InputError(f"{where!r} is neither a .py file nor a module path")
    return f"{where}:{attribute}"


def _name_one(written: str, base_dir: Path) -> str:
    """What to say for a file named without `:Name`: the names it has, in the form to write (it is imported to read
    them, as naming one would). A file holds helpers beside its steps, so none is run unasked."""
    path = (base_dir / written).expanduser().resolve()
    if not path.is_file():
        return f"no such file {path}"
    names = workload_names(load_module(str(path)))
    if not names:
        return f"{written} defines no workload: a step is a function decorated with @asyncbench.step, named as {written}:NAME"
    return f"name the workload in {written}: {written}:{names[0]} (it has {', '.join(names)})"


def _module_name(path: Path) -> str:
    """A module name of its own for a user file, so two files named alike do not clash."""
    return f"asyncbench_user_{abs(hash(str(path))):x}_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}"


def _import(where: str) -> Any:
    if where.endswith(".py"):
        path = Path(where)
        name = _module_name(path)
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise InputError(f"{path.name} cannot be imported as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        if str(path.parent) not in sys.path:
            sys.path.append(str(path.parent))  # so the file can import its neighbours
        try:
            with elsewhere.standing_in():  # `import mxnet` at the top of a file: its steps run in mxnet's worker
                spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
    with elsewhere.standing_in():
        return importlib.import_module(where)


def _user_file(where: str) -> str | None:
    """The file of a reference's module: the path itself, or an imported module's __file__."""
    if where.endswith(".py"):
        return where
    module = sys.modules.get(where)
    return getattr(module, "__file__", None)


def _shown(where: str) -> str:
    """A file by its name, a module by its dotted path."""
    return Path(where).name if where.endswith(".py") else where


def _place(exc: BaseException, where: str) -> str:
    """' (at file.py:12 in setup)': the innermost frame of the traceback in the file of `where`, or ''."""
    user_file = _user_file(where)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if user_file is not None and f.filename == user_file]
    if not frames:
        return ""
    frame = frames[-1]
    return f" (at {Path(frame.filename).name}:{frame.lineno} in {frame.name})"


def place_in_user_code(exc: BaseException, reference: str) -> str:
    """Where in the user's file of a workload reference an exception was raised (' (at file.py:12 in setup)'), or ''."""
    return _place(exc, reference.rpartition(":")[0])


def import_failure(exc: BaseException, where: str) -> str:
    """An exception raised while importing the user's code, as one line with its place in their file."""
    if isinstance(exc, SyntaxError):
        return f"cannot import {_shown(where)}: SyntaxError: {exc.msg} (line {exc.lineno})"
    missing = _missing_package(exc, where)
    return f"cannot import {_shown(where)}: {type(exc).__name__}: {exc}{_place(exc, where)}{missing}"


def _missing_package(exc: BaseException, where: str) -> str:
    """The fix for a package the user's file imports that this Python cannot find (a user's own package not yet
    installed, the CI guide's `mypkg`: validate and run import the file as Python would), or ''."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return ""
    top = exc.name.partition(".")[0]
    return INSTALL_ADVICE.format(top=top)


#: the fix `run` and `validate` give for a package the user's file imports and this Python cannot find; `ab` says
#: instead that the side's tree lacks it (each side imports its own tree first: session.paired), so it finds this
INSTALL_ADVICE = ": install the package that provides '{top}' in this Python (your own: `pip install -e .` at its root)"


def as_workload(value: Any, reference: str) -> Workload:
    """What a reference names, as a workload: a Workload instance, a subclass (instantiated) or a step function."""
    if isinstance(value, Workload):
        return value
    if inspect.isclass(value) and issubclass(value, Workload):
        if inspect.isabstract(value):
            missing = ", ".join(sorted(value.__abstractmethods__))
            raise InputError(f"{value.__name__} does not define {missing}, which a Workload subclass must")
        return value()
    if inspect.isfunction(value):
        from asyncbench.workloads.step_form import StepWorkload

        if not _takes_a_step_s_arguments(value):
            raise InputError(
                f"{value.__name__}{inspect.signature(value)} is not a step function: one takes (backend, device, params) "
                "and returns the step to time (docs: your own code)"
            )
        return StepWorkload(value)
    raise InputError(
        f"{reference.rpartition(':')[2]!r} is a {type(value).__name__} value, not a workload: name a Workload subclass, "
        "a function decorated with @asyncbench.step, or a step function"
    )


def _takes_a_step_s_arguments(function: Any) -> bool:
    """Whether a function can be called as a step function is: with (backend, device, params)."""
    try:
        inspect.signature(function).bind(None, None, None)
    except (TypeError, ValueError):
        return False
    return True


def _names_a_workload(value: Any, module: Any) -> bool:
    """Whether a module's attribute could be what a `FILE:NAME` reference means: a Workload, a subclass of one, or
    a function the module itself defines that takes a step function's (backend, device, params) (a step; a helper
    of its own, or an imported one such as numpy's functions, is not one)."""
    if isinstance(value, Workload) or (inspect.isclass(value) and issubclass(value, Workload) and value is not Workload):
        return True
    return inspect.isfunction(value) and value.__module__ == module.__name__ and _takes_a_step_s_arguments(value)


def workload_names(module: Any) -> list[str]:
    """The names in a module a reference could mean (_names_a_workload), in the order the module defines them."""
    return [n for n, v in vars(module).items() if not n.startswith("_") and _names_a_workload(v, module)]


def load_module(where: str) -> Any:
    """The module of a canonical reference's file or module path, imported once; InputError (one line, with its
    place in the user's file) for one that fails to import."""
    try:
        return _import(where)
    except InputError:
        raise
    except ModuleNotFoundError as exc:
        if where.endswith(".py") or exc.name != where.split(".")[0]:
            raise InputError(import_failure(exc, where)) from None
        raise InputError(f"no module named {where!r} (is it installed, or on PYTHONPATH?)") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed at import: say where, never a traceback
        raise InputError(import_failure(exc, where)) from None


@functools.cache
def load(reference: str) -> Workload:
    """The workload a canonical reference names, imported once per process (this cache is where loaded user
    workloads live: never in the built-in registry)."""
    where, _, attribute = reference.rpartition(":")
    module = load_module(where)
    if not hasattr(module, attribute):
        names = workload_names(module)
        hint = suggestion(attribute, names) or (f"; it has {', '.join(names)}" if names else "")
        raise InputError(f"{_shown(where)} has no {attribute!r}{hint}")
    workload = as_workload(getattr(module, attribute), reference)
    if not workload.name or not isinstance(workload.name, str):
        raise InputError("the workload has no `name`")
    return workload


def find(key: str) -> Workload:
    """A built-in workload by name or a user workload by canonical reference (loading it if need be); InputError
    for a name that is neither."""
    if is_reference(key):
        return load(key)
    built_in = BUILT_IN.get(key)
    if built_in is None:
        raise InputError(f"unknown workload {key!r}")
    return built_in


def is_built_in(key: str, workload: Workload) -> bool:
    """Whether the workload a case runs (under registry key `key`) is one of asyncbench's own: its key is a
    built-in's name, not a file, module or plugin reference, and it is that built-in (or its copy unpickled in a
    worker process: the same class). Decided by where it came from, never by a name a user could also choose."""
    own = None if is_reference(key) else BUILT_IN.get(key)
    return own is not None and type(workload) is type(own)
