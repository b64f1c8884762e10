"""The workloads a user's `.py` file defines, read from its source: what `-w FILE.py:<TAB>` offers.

`run -w FILE.py` names a file's workloads once it has imported it
(plugins.workload_names); a shell completion cannot: importing runs the file,
and a step file imports torch or JAX (seconds, and a GPU context) on every
TAB. So the file is parsed (`ast`), never run, and its top-level
definitions are read by the same rule plugins._names_a_workload applies to
the imported module's values:

- a function (`def` or `async def`) that takes a step function's
  `(backend, device, params)`, or one decorated with `step`
  (`@asyncbench.step`, `@step(backends=...)`);
- a class that derives from a `...Workload` (asyncbench's, or a class of the
  file's own that does);
- a name bound to `step(...)` or to an instance of such a class.

Names starting with `_` are left out, as there. What only running the file
could tell (a workload made in a loop, a class imported from elsewhere) is
not offered. A file that cannot be read or parsed (missing, a folder, a pipe,
too large, not UTF-8, not Python, nested past the parser's limits) has no
names: a completion never fails.
"""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

from asyncbench import inputs
from asyncbench.errors import InputError

# A step file is a few kB; parsing one of 2 MiB takes a fraction of a second, which is what a TAB may cost. A larger
# file is no step file (generated data, a bundle) and is not parsed.
MAX_SOURCE_BYTES = 2 * 2**20
#: the arguments a step function is called with (plugins._takes_a_step_s_arguments)
STEP_ARGUMENTS = 3
#: the decorator and factory that make a step function a workload (asyncbench.step)
STEP = "step"
#: what a Workload class's name ends with (asyncbench.Workload, a StepWorkload, a user's own BaseWorkload)
WORKLOAD = "Workload"


def workload_names(source: str) -> list[str]:
    """The names in `source` a `FILE.py:NAME` reference could mean, in the order the file defines them; ValueError,
    SyntaxError or RecursionError (from the parser) for source that is not Python."""
    tree = ast.parse(source)
    classes: set[str] = set()
    named: dict[str, bool] = {}  # as vars(module): first definition's place, last definition's value
    for node in tree.body:
        for name, is_workload in _definitions(node, classes):
            named[name] = is_workload
            if is_workload and isinstance(node, ast.ClassDef):
                classes.add(name)
    return [name for name, is_workload in named.items() if is_workload and not name.startswith("_")]


def file_workload_names(path: str | Path) -> list[str]:
    """`workload_names` of a file; [] for one that cannot be read or parsed (see the module's docstring)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a pipe would block, a device never end
            return []
        return workload_names(inputs.read_text(path, InputError, "Python file", limit_bytes=MAX_SOURCE_BYTES))
    except (OSError, InputError, ValueError, SyntaxError, RecursionError, MemoryError):
        return []


def _definitions(node: ast.stmt, classes: set[str]) -> list[tuple[str, bool]]:
    """The names a top-level statement binds, each with whether it is a workload."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [(node.name, any(_is_step(d) for d in node.decorator_list) or _takes_step_arguments(node.args))]
    if isinstance(node, ast.ClassDef):
        return [(node.name, any(_is_workload_class(base, classes) for base in node.bases))]
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        made = isinstance(node.value, ast.Call) and (_is_step(node.value.func) or _is_workload_class(node.value.func, classes))
        return [(target.id, made) for target in targets if isinstance(target, ast.Name)]
    return []


def _last_name(node: ast.expr) -> str | None:
    """`step` for `step`, `asyncbench.step` and `step(...)`'s callee; None for anything else."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_step(node: ast.expr) -> bool:
    return _last_name(node) == STEP


def _is_workload_class(node: ast.expr, classes: set[str]) -> bool:
    name = _last_name(node) if not isinstance(node, ast.Call) else None
    return name is not None and (name.endswith(WORKLOAD) or name in classes)


def _takes_step_arguments(arguments: ast.arguments) -> bool:
    """Whether a function with these arguments can be called as a step function is: with three positional ones."""
    positional = [*arguments.posonlyargs, *arguments.args]
    required = len(positional) - len(arguments.defaults)
    required_keywords = sum(default is None for default in arguments.kw_defaults)
    return required <= STEP_ARGUMENTS and (len(positional) >= STEP_ARGUMENTS or arguments.vararg is not None) and not required_keywords
