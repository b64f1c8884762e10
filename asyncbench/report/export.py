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

from typing import Any, Mapping

from asyncbench.report import bars

from asyncbench.verdicts import compare

from asyncbench.report import comparison_view

from asyncbench.verdicts import gate

from asyncbench.verdicts import outcome

from asyncbench.report import render

from asyncbench.results import units
from asyncbench.results.model import CLOCKS, OK, SKIPPED, Memory, Report

#: one unit for every entry: a tracked series must not change unit when a time crosses 1 s or 1 ms
BENCHMARK_UNIT, BENCHMARK_SCALE = "ms", 1e3


MARKDOWN_MARK = {gate.PASS: "✅", gate.FAIL: "❌", gate.INCONCLUSIVE: "❔", gate.NOT_MEASURED: "❌"}


def environment_line(environment: Mapping[str, Any]) -> str:
    """'CPU: ... · Python 3.11.7 · torch 2.13.0+cpu (2 threads) · numpy 2.4.6 · git 1a2b3c4': what the numbers were measured on."""
    parts = [f"CPU: {environment.get('cpu', '?')} ({environment.get('cpu_affinity', '?')} usable cores)"]
    parts.append(f"Python {environment.get('python', '?')}")
    for name, facts in (environment.get("frameworks") or {}).items():
        if not isinstance(facts, Mapping):
            continue
        if facts.get("unavailable"):
            parts.append(f"{name}: not available")
            continue
        threads = f" ({facts['threads']} threads)" if facts.get("threads") else ""
        cuda = f", CUDA {facts['cuda']}" if facts.get("cuda") else ""
        parts.append(f"{name} {facts.get('version') or '?'}{cuda}{threads}")
    sha = environment.get("git_sha")
    parts.append(f"git {sha[:12]}{'-dirty' if str(sha).endswith('-dirty') else ''}" if sha else "git: not a repository")
    return " · ".join(parts)


def markdown(report: Report, comparison: compare.Comparison | None = None, verdict: outcome.Outcome | None = None) -> str:
    """The report (and its comparison with a baseline) as GitHub-flavoured markdown: a headline first, then the tables."""
    lines = [f"## asyncbench: {outcome.headline(report)}", "", f"{environment_line(report.environment)} · {report.created}", ""]
    if verdict is not None and verdict.code:
        lines += [f"**exit {verdict.code}** because:", *(f"- {reason}" for reason in verdict.reasons), ""]
    for name, results in render.by_experiment(report.results):
        shown = [r for r in results if not (r.status == SKIPPED and r.unavailable)]
        if not shown:
            continue
        swept = render.swept_params(results)
        rows = render.tabled(shown)
        columns = render.clock_columns(rows)
        lines += [f"### {name}", ""]
        if rows:
            lines += [
                "| " + " | ".join([*swept, "backend", "device", "variant", *(header for header, _ in columns)]) + " |",
                "|" + "---|" * (len(swept) + 3) + "--:|" * len(columns),
            ]
        for result in rows:
            point = [units.param(result.params.get(p)) for p in swept]
            if not result.variants:
                lines.append("| " + " | ".join([*point, result.backend, result.device, result.status, *[""] * len(columns)]) + " |")
            for variant_name, v in result.variants.items():
                lines.append("| " + " | ".join([*point, result.backend, result.device, variant_name, *(cell(v) for _, cell in columns)]) + " |")
        lines.append("")
        for result in shown:
            who = render.case_label(result, swept)
            if result.status != OK:
                lines.append(f"- **{who}**: {result.status}: {result.reason or ''}")
            elif result.metrics:
                text = render.reading(result)
                on = f" ({result.note})" if result.note else ""
                lines.append(f"- **{who}**{on}: {render.metric_line(result)}" + (f" — {text}" if text else ""))
            drawn = bars.clock_bars(result)
            if drawn:
                lines += ["", "  ```text", *(f"  {line}" for line in drawn), "  ```", ""]
            note = render.sampling_note(result)
            if note:
                lines.append(f"  - ⚠️ {note}")
            if result.traces:
                lines.append(f"  - traced ({result.trace_detail}): `{render.trace_files(result)}` — open in ui.perfetto.dev")
            lines += [f"  - ⚠️ {warning}" for warning in result.warnings]
            for check in result.checks:
                lines.append(f"  - {MARKDOWN_MARK.get(check.get('verdict'), '❌')} `{check.get('expect')}`: {check.get('detail', '')}")
        lines.append("")
    lines += [f"- {line}" for line in outcome.unavailable_lines(report.results)]
    lines.append(f"\n_{render.SPREAD_NOTE}._")
    if comparison is not None:
        lines += ["", *comparison_markdown(comparison)]
    return "\n".join(lines) + "\n"


def comparison_markdown(comparison: compare.Comparison) -> list[str]:
    lines = [
        f"### Compared with the baseline ({comparison.clock}, max regression {comparison.max_regression * 100:.3g}%)",
        "",
        "| case | variant | baseline | current | change | within-run p | verdict |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for row in comparison.rows:
        verdict = f"**{row.verdict}**" if row.verdict == compare.SLOWER else row.verdict
        lines.append(
            f"| {row.id} | {row.variant} | {units.seconds(row.baseline_s)} | {units.seconds(row.current_s)} "
            f"| {comparison_view.change_text(row.ratio)} | {comparison_view.p_text(row.p_value)} | {verdict} |"
        )
    lines.append("")
    lines += [f"- {line}" for line in comparison_view.comparison_notes(comparison)]
    lines.append(f"\n_{compare.P_VALUE_SEES}._")
    lines.append(f"\n{comparison_view.comparison_summary(comparison)}")
    return lines


def csv_text(report: Report) -> str:
    """One row per variant (or per skipped/error case), metrics as `metric_*` columns, checks in one column."""
    metric_names = list(dict.fromkeys(name for r in report.results for name in r.metrics))
    param_names = list(dict.fromkeys(name for r in report.results for name in r.params))
    columns = ["id", "experiment", "workload", "backend", "device", "status", "reason", "variant"]
    columns += [f"param_{p}" for p in param_names]
    for clock in CLOCKS:
        columns += [f"{clock}_median", f"{clock}_iqr", f"{clock}_ci_low", f"{clock}_ci_high"]
    bounded = list(dict.fromkeys(name for r in report.results for name in r.bounds))
    columns += ["n", *(f.name for f in dataclasses.fields(Memory)), *(f"metric_{m}" for m in metric_names)]
    columns += [f"metric_{m}_{side}" for m in bounded for side in ("low", "high")]
    columns += ["checks"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for result in report.results:
        base = {k: getattr(result, k) for k in ("id", "experiment", "workload", "backend", "device", "status", "reason")}
        base.update({f"param_{k}": json.dumps(v) if isinstance(v, list) else v for k, v in result.params.items()})
        base.update({f"metric_{k}": v for k, v in result.metrics.items()})
        for name, interval in result.bounds.items():
            if interval is not None:
                base.update({f"metric_{name}_low": interval[0], f"metric_{name}_high": interval[1]})
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
            known = v.done_s.ci_low is not None and v.done_s.ci_high is not None
            half_ci = (v.done_s.ci_high - v.done_s.ci_low) / 2 if known else None
            entries.append(
                {
                    "name": f"{result.id} {variant_name}",
                    "unit": BENCHMARK_UNIT,
                    "value": v.done_s.median * BENCHMARK_SCALE,
                    "range": f"± {units.number(half_ci * BENCHMARK_SCALE, 4)}" if half_ci is not None else "no 95% CI (too few samples)",
                    "extra": f"median of {v.done_s.n} samples; ± is half the 95% CI of the median; "
                    f"issue {units.seconds(v.issue_s.median)}",
                }
            )
    return json.dumps(entries, indent=1) + "\n"
