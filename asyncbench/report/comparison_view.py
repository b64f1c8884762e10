"""A baseline comparison as a person reads it: a rich table in the terminal, lines shared with the markdown."""

from __future__ import annotations

import math

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from asyncbench.verdicts import compare

from asyncbench.results import units

VERDICT_STYLE = {compare.SAME: "", compare.FASTER: "green", compare.SLOWER: "bold red", compare.INCONCLUSIVE: "yellow"}


def change_text(ratio: float) -> str:
    """+12.3% (slower) / −40.0% (faster) as the change of the median."""
    if math.isnan(ratio):
        return "–"
    change = (ratio - 1) * 100
    return f"{change:+.1f}%".replace("-", "−")


def p_text(p: float | None) -> str:
    return "–" if p is None else (f"{p:.3f}" if p >= 0.001 else "<0.001")


def comparison_table(comparison: compare.Comparison) -> Table:
    threshold = f"{comparison.max_regression * 100:.3g}%"
    table = Table(
        title=f"compared with the baseline ({comparison.clock}, max regression {threshold}, within-run p < {compare.SIGNIFICANCE})",
        title_justify="left",
    )
    for column in ("case", "variant"):
        table.add_column(column)
    for column in ("baseline", "current", "change", "within-run p", "verdict"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in comparison.rows:
        style = VERDICT_STYLE[row.verdict]
        verdict = f"[{style}]{row.verdict}[/]" if style else row.verdict
        table.add_row(
            escape(row.id), row.variant, units.seconds(row.baseline_s), units.seconds(row.current_s),
            change_text(row.ratio), p_text(row.p_value), verdict,
        )
    return table


def comparison_notes(comparison: compare.Comparison) -> list[str]:
    """Plain lines: what could not be compared and how the environments differ."""
    lines = []
    if comparison.only_in_baseline:
        lines.append(f"only in the baseline ({len(comparison.only_in_baseline)}): {', '.join(comparison.only_in_baseline)}")
    if comparison.only_in_current:
        lines.append(f"only in the current run ({len(comparison.only_in_current)}): {', '.join(comparison.only_in_current)}")
    lines += [f"not run now: {case_id}: {why}" for case_id, why in comparison.lost]
    lines += [f"not compared: {case_id}: {why}" for case_id, why in comparison.not_comparable]
    lines += [f"environment differs: {key}: {old!r} → {new!r}" for key, old, new in comparison.environment_changes]
    return lines


def comparison_summary(comparison: compare.Comparison) -> str:
    counts = {v: sum(1 for r in comparison.rows if r.verdict == v) for v in VERDICT_STYLE}
    text = ", ".join(f"{n} {v}" for v, n in counts.items() if n) or "nothing compared"
    slower = comparison.regressions
    if slower:
        text += "; slower: " + ", ".join(f"{r.id} {r.variant} ({change_text(r.ratio)})" for r in slower)
    if comparison.lost:
        text += f"; {len(comparison.lost)} case(s) ok in the baseline did not run ok now"
    return text


def failed(comparison: compare.Comparison) -> bool:
    """Whether the comparison fails a gate: a significant slowdown, or a case lost since the baseline."""
    return bool(comparison.regressions or comparison.lost)


def print_comparison(comparison: compare.Comparison, console: Console) -> None:
    console.print(comparison_table(comparison))
    for line in comparison_notes(comparison):
        console.print(f"  [yellow]{escape(line)}[/]")
    console.print(f"  [dim]{escape(compare.P_VALUE_SEES)}[/]", soft_wrap=not console.is_terminal)
    style = "red" if failed(comparison) else "green"
    console.print(f"[{style}]{escape(comparison_summary(comparison))}[/]", soft_wrap=not console.is_terminal)
