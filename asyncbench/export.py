"""Results as files for other tools: markdown (a CI job summary), CSV, and benchmark-tracking JSON.

`github_benchmark` writes the "customSmallerIsBetter" format that CI
benchmark-tracking actions read: a list of {name, unit, value, range,
extra}, one entry per case and variant, the median done time in a fixed
unit so that a series keeps one unit over the commits it tracks.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json

from asyncbench import compare, gate, render, units
from asyncbench.model import CLOCKS, OK, Memory, Report

#: one unit for every entry: a tracked series must not change unit when a time crosses 1 s or 1 ms
BENCHMARK_UNIT, BENCHMARK_SCALE = "ms", 1e3


def markdown(report: Report, comparison: compare.Comparison | None = None) -> str:
    """The report (and its comparison with a baseline) as GitHub-flavoured markdown."""
    lines = [f"## asyncbench results ({report.created})", ""]
    for name, results in render.by_experiment(report.results):
        swept = render.swept_params(results)
        lines += [
            f"### {name}",
            "",
            "| " + " | ".join([*swept, "backend", "device", "variant", "issue", "done", "device time", "memory", "n"]) + " |",
            "|" + "---|" * (len(swept) + 3) + "--:|" * 5,
        ]
        for result in results:
            point = [units.param(result.params.get(p)) for p in swept]
            if result.status != OK:
                lines.append("| " + " | ".join([*point, result.backend, result.device, f"{result.status}: {result.reason or ''}", *[""] * 5]) + " |")
                continue
            for variant_name, v in result.variants.items():
                cells = [*point, result.backend, result.device, variant_name, render.spread(v.issue_s), render.spread(v.done_s)]
                cells += [render.spread(v.device_s), render.memory_cell(v), str(v.done_s.n)]
                lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        for result in results:
            who = render.case_label(result, swept)
            if result.status == OK and result.metrics:
                text = render.reading(result)
                on = f" ({result.note})" if result.note else ""
                lines.append(f"- **{who}**{on}: {render.metric_line(result)}" + (f" — {text}" if text else ""))
            for check in result.checks:
                mark = "❌" if gate.failed(check) else "✅"
                lines.append(f"  - {mark} `{check.get('expect')}`: {check.get('detail', '')}")
        lines.append("")
    lines.append(f"_{render.SPREAD_NOTE}._")
    if comparison is not None:
        lines += ["", *comparison_markdown(comparison)]
    return "\n".join(lines) + "\n"


def comparison_markdown(comparison: compare.Comparison) -> list[str]:
    lines = [
        f"### Compared with the baseline ({comparison.clock}, max regression {comparison.max_regression * 100:.3g}%)",
        "",
        "| case | variant | baseline | current | change | p | verdict |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for row in comparison.rows:
        verdict = f"**{row.verdict}**" if row.verdict == compare.SLOWER else row.verdict
        lines.append(
            f"| {row.id} | {row.variant} | {units.seconds(row.baseline_s)} | {units.seconds(row.current_s)} "
            f"| {render.change_text(row.ratio)} | {render.p_text(row.p_value)} | {verdict} |"
        )
    lines.append("")
    lines += [f"- {line}" for line in render.comparison_notes(comparison)]
    lines.append(f"\n{render.comparison_summary(comparison)}")
    return lines


def csv_text(report: Report) -> str:
    """One row per variant (or per skipped/error case), metrics as `metric_*` columns, checks in one column."""
    metric_names = list(dict.fromkeys(name for r in report.results for name in r.metrics))
    param_names = list(dict.fromkeys(name for r in report.results for name in r.params))
    columns = ["id", "experiment", "workload", "backend", "device", "status", "reason", "variant"]
    columns += [f"param_{p}" for p in param_names]
    for clock in CLOCKS:
        columns += [f"{clock}_median", f"{clock}_iqr", f"{clock}_ci_low", f"{clock}_ci_high"]
    columns += ["n", *(f.name for f in dataclasses.fields(Memory)), *(f"metric_{m}" for m in metric_names), "checks"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for result in report.results:
        base = {k: getattr(result, k) for k in ("id", "experiment", "workload", "backend", "device", "status", "reason")}
        base.update({f"param_{k}": json.dumps(v) if isinstance(v, list) else v for k, v in result.params.items()})
        base.update({f"metric_{k}": v for k, v in result.metrics.items()})
        base["checks"] = "; ".join(f"{c.get('verdict')}: {c.get('expect')}" for c in result.checks)
        if not result.variants:
            writer.writerow(base)
        for variant_name, v in result.variants.items():
            row = dict(base, variant=variant_name, n=v.done_s.n)
            for clock in CLOCKS:
                stats = getattr(v, clock)
                if stats is not None:
                    row.update({f"{clock}_{k}": getattr(stats, k) for k in ("median", "iqr", "ci_low", "ci_high")})
            row.update(dataclasses.asdict(v.memory))
            writer.writerow(row)
    return buffer.getvalue()


def github_benchmark(report: Report) -> str:
    """Median done time of every ok case and variant, smaller is better, as benchmark-tracking JSON."""
    entries = []
    for result in report.results:
        if result.status != OK:
            continue
        for variant_name, v in result.variants.items():
            half_ci = (v.done_s.ci_high - v.done_s.ci_low) / 2
            entries.append(
                {
                    "name": f"{result.id} {variant_name}",
                    "unit": BENCHMARK_UNIT,
                    "value": v.done_s.median * BENCHMARK_SCALE,
                    "range": f"± {half_ci * BENCHMARK_SCALE:.4g}",
                    "extra": f"median of {v.done_s.n} samples; ± is half the 95% CI of the median; "
                    f"issue {units.seconds(v.issue_s.median)}",
                }
            )
    return json.dumps(entries, indent=1) + "\n"
