"""asyncbench: measure what asynchronous execution does for (and to) array programs.

The public API for your own workloads (stable; the built-in workloads use it too):

    from asyncbench import Workload, Param, Metric, Prepared, step

`step` turns a function that issues one step of your work into a workload;
`Workload` is the full form. From Python (a notebook, a script):

    report = asyncbench.load("results.json")     # a results or `ab` file, typed; a table in Jupyter
    report = asyncbench.run(my_step, backend="numpy", max_time_s=2)

Importing these imports no framework.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from asyncbench.version import __version__

__all__ = [
    "BOOL",
    "FLOAT",
    "INT",
    "INTS",
    "SHAPE",
    "STR",
    "Metric",
    "Param",
    "Prepared",
    "Workload",
    "__version__",
    "load",
    "run",
    "step",
]

_FROM_BASE = {"BOOL", "FLOAT", "INT", "INTS", "SHAPE", "STR", "Metric", "Param", "Prepared", "Workload"}

if TYPE_CHECKING:
    from asyncbench.session.python_face import load, run
    from asyncbench.workloads.base import BOOL, FLOAT, INT, INTS, SHAPE, STR, Metric, Param, Prepared, Workload
    from asyncbench.workloads.step_form import step


# Hidden from type checkers: they read the names above; a module `__getattr__` would make every misspelt
# `asyncbench.<name>` an Any to a user's mypy --strict.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """The public names, imported on first use: `asyncbench --help` stays as fast as the package's top."""
        if name in _FROM_BASE:
            from asyncbench.workloads import base

            return getattr(base, name)
        if name == "step":
            from asyncbench.workloads.step_form import step

            return step
        if name in ("load", "run"):
            from asyncbench.session import python_face

            return getattr(python_face, name)
        raise AttributeError(f"module 'asyncbench' has no attribute {name!r}")
