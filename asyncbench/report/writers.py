"""The registry of output formats: one line per writer feeds both `run`'s output options and `show --format`.

A writer turns the view model into the text (or bytes) of one format. Its
entry says what it is called (`show --format NAME`), the `run` option that
writes it to a file (None: not a `run` output), and whether it can go to
standard output. Adding a format is one module with its function and one
line here; the CLI builds its options and choices from this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from asyncbench.report import csv_file, github, markdown, plot
from asyncbench.report.view import ReportView
from asyncbench.results import schema

Render = Callable[[ReportView, str], "str | bytes"]


@dataclass(frozen=True)
class Writer:
    """One output format."""

    name: str
    #: the `run` option that writes it to a file ("--markdown"), None: not a `run` output
    option: str | None
    help: str
    #: (view, destination path) -> the file's content; the path only names a format where the suffix matters (plot)
    render: Render
    #: whether `show --format NAME` prints it (binary formats go to files only)
    to_stdout: bool = True
    #: a check made before anything runs: the format can be written at all (an optional package, a suffix)
    check: Callable[[str], None] | None = None
    #: whether it needs a swept experiment to say anything (plot)
    needs_sweep: bool = False


WRITERS: dict[str, Writer] = {
    w.name: w
    for w in (
        Writer("json", None, "the results file itself", lambda view, path: schema.dumps(view.report)),
        Writer(
            "markdown", "--markdown", "Also write the results as markdown (a CI job summary).", lambda view, path: markdown.markdown(view)
        ),
        Writer("csv", "--csv", "Also write one CSV row per case and variant.", lambda view, path: csv_file.csv_text(view)),
        Writer(
            "github-benchmark",
            "--github-benchmark",
            "Also write median done times as benchmark-tracking JSON (customSmallerIsBetter).",
            lambda view, path: github.github_benchmark(view),
        ),
        Writer(
            "plot",
            "--plot",
            "Draw each swept experiment's metrics against the sweep (.png, .svg or .pdf; needs matplotlib).",
            plot.draw,
            to_stdout=False,
            check=plot.check_available,
            needs_sweep=True,
        ),
    )
}


def file_writers() -> list[Writer]:
    """The formats `run` can write to files, each with its option."""
    return [w for w in WRITERS.values() if w.option is not None]


def option_dest(writer: Writer) -> str:
    """The keyword a writer's `run` option arrives under: --github-benchmark -> github_benchmark_path."""
    assert writer.option is not None
    return writer.option.lstrip("-").replace("-", "_") + "_path"
