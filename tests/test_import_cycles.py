"""No import circle inside asyncbench, not even one kept alive only for type checking.

The import-linter contracts (pyproject.toml, `make lint`) leave out imports under `if TYPE_CHECKING:`, since they
are no dependency at run time; but a circle that only type checking closes still ties two modules into one that
cannot be read, moved or tested alone. This builds the graph with grimp (import-linter's own library) with those
imports in, and asks it, as the `acyclic_siblings` contract does, for the imports that would have to go for the
children of each package to depend on each other one way only.
"""

from __future__ import annotations

import grimp


def test_no_package_has_an_import_circle_type_checking_imports_included():
    graph = grimp.build_graph("asyncbench", exclude_type_checking_imports=False, cache_dir=None)
    packages = sorted(module for module in graph.modules if graph.find_children(module))
    assert "asyncbench.results" in packages
    circles = {package: sorted(graph.nominate_cycle_breakers(package)) for package in packages}
    assert {package: breakers for package, breakers in circles.items() if breakers} == {}
