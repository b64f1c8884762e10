"""A user's file that imports, at its top, a framework whose cases run in another Python (MXNet's own environment).

MXNet cannot share this environment (it needs numpy < 1.24), so its cases run in a worker started with the Python
of `.venv-mxnet` or ASYNCBENCH_MXNET_PYTHON (backends.mxnet_backend), and this process never imports mxnet. A step
file is still imported here, to name its steps and plan its cases; a file written as MXNet code is written

    import mxnet as mx

    @asyncbench.step
    def loop(backend, device, params):
        x = mx.nd.ones((256, 256))
        ...

and the step's code runs in the worker only, which imports the file again with the real mxnet. While a file is
imported here, `standing_in` answers an import of such a framework (its top module or one below it) that no other
finder answers with a stand-in module: one whose name is the framework's (so step_reach reads the step as
MXNet code and plans it on mxnet only) and whose every other attribute raises an AttributeError saying where the
framework runs. So the file's top-level imports succeed, and module-level use of the framework itself (`mx.cpu()`
at the top of the file) is one line saying to move it into the step function. The stand-ins leave sys.modules when
the import ends: nothing else in this process takes mxnet as imported.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Iterator, Sequence

from asyncbench.backends import BACKENDS


def elsewhere() -> frozenset[str]:
    """The top-level modules of the frameworks whose cases run in another Python than this one."""
    return frozenset(
        backend.module for backend in (cls() for cls in BACKENDS.values()) if backend.module and backend.interpreter() is not None
    )


class StandIn(types.ModuleType):
    """A framework module that lives in another Python, standing in for it while a user's file is imported here."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []  # a package: `import mxnet.ndarray`, `from mxnet import gluon` are answered too

    def __getattr__(self, attribute: str) -> object:
        if attribute.startswith("__"):  # what import machinery and introspection probe for
            raise AttributeError(attribute)
        top = self.__name__.partition(".")[0]
        raise AttributeError(
            f"{self.__name__}.{attribute}: {top} is not imported in this Python ({sys.executable}): its cases run in "
            f"{top}'s own worker, which imports this file again with {top}: run this step with -b {top}, and at a "
            f"file's top only import {top} (module-level code runs in this Python too)"
        )


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers, last of all finders, the imports of `tops` and the modules below them with stand-ins."""

    def __init__(self, tops: frozenset[str]) -> None:
        self.tops = tops
        self.made: list[str] = []

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] not in self.tops:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        self.made.append(spec.name)
        return StandIn(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


@contextlib.contextmanager
def standing_in() -> Iterator[None]:
    """While a user's file is imported: the frameworks that run in another Python, where this one cannot import
    them, imported as stand-ins (the module's docstring); none left in sys.modules after."""
    tops = elsewhere()
    if not tops:
        yield
        return
    finder = _Finder(tops)
    sys.meta_path.append(finder)  # last: a framework this Python can import is the real one
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in finder.made:
            if isinstance(sys.modules.get(name), StandIn):
                del sys.modules[name]
