"""What can be run here: the workloads (`asyncbench list`) and the backends × devices (`asyncbench devices`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from rich.table import Table

from asyncbench.report import escaping

if TYPE_CHECKING:  # the CLI hands these in: the report layer imports no backend and no workload registry
    from asyncbench.backends.handles import DeviceStatus
    from asyncbench.workloads.base import Param, Workload


def workloads_table(workloads: Iterable[Workload], origins: Mapping[str, str] | None = None) -> Table:
    """Every workload; `origins` says where a non-built-in one comes from (by workload name). A plugin's words are
    data: each is escaped for rich (report.escaping) before the lines of a cell are joined."""
    shown = escaping.rich
    origins = origins or {}
    table = Table(title="workloads", title_justify="left", show_lines=True)
    table.add_column("workload", style="bold")
    table.add_column("what it measures")
    table.add_column("params (default / quick)")
    table.add_column("variants")
    table.add_column("metrics")
    for w in workloads:
        params = "\n".join(shown(param_line(p)) for p in w.params)
        summary = shown(w.summary) + (f"\n[dim]from {shown(origins[w.name])}[/]" if w.name in origins else "")
        table.add_row(shown(w.name), summary, params, "\n".join(map(shown, w.variants)), "\n".join(shown(m.name) for m in w.metrics))
    return table


def param_line(param: Param) -> str:
    """'size = 4000 / 384 (default on cpu: 1000)': the default, the --quick value, and the defaults per backend or device."""
    line = f"{param.name} = {json.dumps(param.default)}" + (f" / {json.dumps(param.quick)}" if param.quick is not None else "")
    if param.per_backend:
        line += " (default on " + ", ".join(f"{key}: {json.dumps(value)}" for key, value in param.per_backend.items()) + ")"
    return line


def workloads_json(workloads: Iterable[Workload], origins: Mapping[str, str] | None = None) -> str:
    origins = origins or {}
    return json.dumps(
        [
            {
                "name": w.name,
                "summary": w.summary,
                "origin": origins.get(w.name, "built-in"),
                "params": [
                    {
                        "name": p.name,
                        "kind": p.kind,
                        "default": p.default,
                        "quick": p.quick,
                        "per_backend": dict(p.per_backend),
                        "choices": list(p.choices),
                        "help": p.help,
                    }
                    for p in w.params
                ],
                "variants": list(w.variants),
                "metrics": [{"name": m.name, "unit": m.unit, "help": m.help} for m in w.metrics],
            }
            for w in workloads
        ],
        indent=1,
    )


def devices_table(statuses: Sequence[DeviceStatus]) -> Table:
    table = Table(title="backends × devices", title_justify="left")
    for column in ("backend", "device", "usable", "detail"):
        table.add_column(column)
    for s in statuses:
        shown = escaping.rich
        table.add_row(shown(s.backend), shown(s.device), "[green]yes[/]" if s.available else "[yellow]no[/]", shown(s.detail))
    return table
