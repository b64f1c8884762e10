"""A minimal output format: one tab-separated line per case and variant (id, variant, median done time in seconds).

Saved as `asyncbench/report/tsv.py`, register it with one line in `asyncbench/report/writers.py`:

    Writer("tsv", "--tsv", "Also write median done times as tab-separated values.", "asyncbench.report.tsv:tsv"),

and `asyncbench run --tsv FILE` and `asyncbench show r.json --format tsv` both exist.
"""

from __future__ import annotations

from asyncbench.report.view import ReportView


def tsv(view: ReportView, path: str) -> str:
    """A writer only formats the view model: the report's data is `view.report`, the words are the view's own."""
    lines = ["id\tvariant\tdone_s"]
    for result in view.report.results:
        lines += [f"{result.id}\t{name}\t{variant.done_s.median!r}" for name, variant in result.variants.items()]
    return "\n".join(lines) + "\n"
