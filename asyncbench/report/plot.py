"""`--plot FILE.png`: every swept experiment's done time and metrics against its sweep axis.

One row of panels per swept experiment: the median done time and then each
metric, each with its 95% interval as error bars, against the first swept
param; one line per backend/device/variant (and per value of any other
swept param), a legend on every panel.
matplotlib is an optional extra (`pip install 'asyncbench[plot]'`), imported
only here and only when a plot is asked for.
"""

from __future__ import annotations

import io
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

from asyncbench import extras
from asyncbench.errors import InputError
from asyncbench.report.case_labels import point_label
from asyncbench.report.view import ReportView
from asyncbench.results import units, writing
from asyncbench.results.model import OK, Result

#: per-variant metrics share a panel: epoch_s_k1, epoch_s_k2 -> epoch_s_kK (the workloads' convention)
PER_VARIANT_SUFFIX = re.compile(r"_k\d+$")

# Beyond this span a numeric axis is read on a log scale (n_ops from 10 to 100000).
LOG_AXIS_SPAN = 100
PANELS_PER_ROW = 4
PANEL_SIZE_IN = (4.2, 3.2)


def check_available(path: str) -> None:
    """Fail before running (exit 2) if the plot could not be drawn or saved."""
    extras.require("--plot", "matplotlib")
    if Path(path).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InputError("expected a .png, .svg or .pdf file name", location=path)
    writing.check_writable(path)


def _axis_value(value: Any) -> Any:
    """A sweep value as a point on the x axis: a one-element list (sync_every: [4]) is its element."""
    if isinstance(value, list) and len(value) == 1:
        return value[0]
    return units.param(value) if isinstance(value, (list, bool)) else value


def _series(results: Sequence[Result], axis: str, others: Sequence[str]) -> dict[str, dict[str, list[tuple[Any, float, float, float]]]]:
    """panel -> series label -> [(x, y, y_low, y_high)]; panels are 'done' and each metric."""
    panels: dict[str, dict[str, list[tuple[Any, float, float, float]]]] = defaultdict(lambda: defaultdict(list))
    one_variant = all(len(r.variants) <= 1 for r in results if r.status == OK)
    for result in results:
        if result.status != OK:
            continue
        x = _axis_value(result.params.get(axis))
        who = " ".join([result.backend, result.device, *(point_label(result, [o]) for o in others)])
        for name, variant in result.variants.items():
            label = who if one_variant else f"{who} {name}"
            done = variant.done_s
            low = done.ci_low if done.ci_low is not None else done.median
            high = done.ci_high if done.ci_high is not None else done.median
            panels["done time (s)"][label].append((x, done.median, low, high))
        per_declared: dict[str, list[str]] = defaultdict(list)
        for name in result.metrics:
            per_declared[PER_VARIANT_SUFFIX.sub("_kK", name)].append(name)
        for declared, names in per_declared.items():
            for name in names:
                value = result.metrics[name]
                if value is None or not math.isfinite(value):
                    continue
                label = who if len(names) == 1 else f"{who} {name}"
                low, high = result.bounds.get(name) or (value, value)
                panels[declared][label].append((x, value, low, high))
    return panels


def panel_title(panel: str) -> str:
    """A metric's name as a person reads it: per-variant metrics lose their K placeholder (epoch_s_kK -> epoch_s per sync_every)."""
    if panel.endswith("_kK"):
        return f"{panel.removesuffix('_kK')} per sync_every"
    return panel


def _numeric_axis(values: Sequence[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values)


def check_drawable(view: ReportView) -> None:
    """InputError when the report has nothing to plot (no experiment is swept): `show --plot` asks it before it prints
    anything, so bad input is refused before any output (docs/concepts/failures.md), not after the whole table."""
    if not any(e.swept for e in view.experiments):
        raise InputError("nothing to plot: no experiment has a sweep (use sweep: in a config or --set KEY=V1,V2)")


def draw(view: ReportView, path: str) -> bytes:
    """Every swept experiment of the report, drawn in the format `path`'s suffix names (InputError when none is swept)."""
    check_drawable(view)
    swept = [(e.name, list(e.results), list(e.swept)) for e in view.experiments if e.swept]
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    layouts = []
    for name, group, params in swept:
        panels = _series(group, params[0], params[1:])
        layouts.append((name, group, params[0], panels, math.ceil(len(panels) / PANELS_PER_ROW) or 1))
    rows = sum(layout[-1] for layout in layouts)
    figure, axes = plt.subplots(rows, PANELS_PER_ROW, figsize=(PANEL_SIZE_IN[0] * PANELS_PER_ROW, PANEL_SIZE_IN[1] * rows), squeeze=False)
    row = 0
    for name, group, axis, panels, panel_rows in layouts:
        order = list(dict.fromkeys(_axis_value(r.params.get(axis)) for r in group))
        numeric = _numeric_axis(order)
        for index, (panel, series) in enumerate(panels.items()):
            ax = axes[row + index // PANELS_PER_ROW][index % PANELS_PER_ROW]
            declared = next(
                (r.unit_of(name) for r in group for name in r.metric_info if PER_VARIANT_SUFFIX.sub("_kK", name) == panel), None
            )
            unit = f" ({declared})" if declared and declared not in ("", "bool") else ""
            scale = 100 if declared == "%" else 1  # fractions are drawn as percent
            for label, points in series.items():
                xs = [p[0] if numeric else order.index(p[0]) for p in points]
                ys = [p[1] * scale for p in points]
                errors = [[(p[1] - p[2]) * scale for p in points], [(p[3] - p[1]) * scale for p in points]]
                ax.errorbar(xs, ys, yerr=errors, marker="o", capsize=2, label=label)
            if numeric and max(order) / min(order) >= LOG_AXIS_SPAN:
                ax.set_xscale("log")
            if not numeric:
                ax.set_xticks(range(len(order)), [str(v) for v in order], parse_math=False)
            values = [p[1] for points in series.values() for p in points]
            is_time = panel.startswith("done") or declared == "s"
            # only times spanning decades get a log axis: a log axis turns near-zero noise (memory deltas) into drama
            if is_time and values and min(values) > 0 and max(values) / min(values) >= LOG_AXIS_SPAN:
                ax.set_yscale("log")
            # a name is data (report.escaping): `$...$` in it is text, not mathtext (whose parse error was a crash)
            ax.set_title(f"{name}: {panel_title(panel)}{unit}", fontsize=9, parse_math=False)
            ax.set_xlabel(axis, parse_math=False)
            ax.grid(True, alpha=0.3)
            if series:
                for text in ax.legend(fontsize=7).get_texts():
                    text.set_parse_math(False)
        for index in range(len(panels), panel_rows * PANELS_PER_ROW):
            axes[row + index // PANELS_PER_ROW][index % PANELS_PER_ROW].set_visible(False)
        row += panel_rows
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, dpi=110, format=Path(path).suffix.lower().lstrip("."))
    plt.close(figure)
    return image.getvalue()
