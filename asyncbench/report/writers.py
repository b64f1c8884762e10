"""The registry of output formats: one line per writer feeds both `run`'s output options and `show --format`.

A writer turns the view model into the text (or bytes) of one format. Its
entry says what it is called (`show --format NAME`), the `run` option that
writes it to a file (None: not a `run` output), and where its function is,
as "module:function" — imported only when that format is written, so that
`asyncbench --help` (whose options come from this table) stays fast. Adding
a format is one module with its function and one line here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from asyncbench.report.view import ReportView


def _resolve(reference: str) -> Callable[..., Any]:
    module, _, function = reference.partition(":")
    return getattr(importlib.import_module(module), function)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Writer:
    """One output format."""

    name: str
    #: the `run` option that writes it to a file ("--markdown"), None: not a `run` output
    option: str | None
    help: str
    #: "module:function" of the writer: (view, destination path) -> the content; the path names a format only
    #: where its suffix matters (plot)
    target: str
    #: whether `show --format NAME` prints it (binary formats go to files only)
    to_stdout: bool = True
    #: "module:function" of a check made before anything runs (path) -> None, raising InputError: the format can be
    #: written at all (an optional package, a suffix); None: the file must only be writable
    check: str | None = None
    #: whether it needs a swept experiment to say anything (plot)
    needs_sweep: bool = False

    def render(self, view: ReportView, path: str) -> str | bytes:
        content: str | bytes = _resolve(self.target)(view, path)
        return content

    def check_destination(self, path: str) -> None:
        """Fail now (InputError, exit 2), not after a long run, if `path` could not be written in this format."""
        if self.check is not None:
            _resolve(self.check)(path)
        else:
            from asyncbench.results.writing import check_writable

            check_writable(path)


def json_text(view: ReportView, path: str) -> str:
    """The results file itself."""
    return view.report.to_json()


WRITERS: dict[str, Writer] = {
    w.name: w
    for w in (
        Writer("json", None, "the results file itself", "asyncbench.report.writers:json_text"),
        Writer("markdown", "--markdown", "Also write the results as markdown (a CI job summary).", "asyncbench.report.markdown:markdown"),
        Writer("csv", "--csv", "Also write one CSV row per case and variant.", "asyncbench.report.csv_file:csv_text"),
        Writer(
            "github-benchmark",
            "--github-benchmark",
            "Also write median done times as benchmark-tracking JSON (customSmallerIsBetter).",
            "asyncbench.report.github:github_benchmark",
        ),
        Writer(
            "bmf",
            "--bmf",
            "Also write every measure as Bencher Metric Format JSON: median as value, its 95% interval as lower/upper "
            "(seconds for times). E.g. --bmf bmf.json, then: bencher run --adapter json --file bmf.json",
            "asyncbench.report.bmf:bmf",
        ),
        Writer(
            "junit",
            "--junit",
            "Also write each expect: check (and errored case) as a JUnit XML test, failing as the gate fails it, for CI "
            "test reports. E.g. --junit junit.xml (GitLab: artifacts:reports:junit: junit.xml)",
            "asyncbench.report.junit:junit",
        ),
        Writer(
            "plot",
            "--plot",
            "Draw each swept experiment's metrics against the sweep (.png, .svg or .pdf; needs matplotlib).",
            "asyncbench.report.plot:draw",
            to_stdout=False,
            check="asyncbench.report.plot:check_available",
            needs_sweep=True,
        ),
    )
}


def file_writers() -> list[Writer]:
    """The formats `run` can write to files, each with its option."""
    return [w for w in WRITERS.values() if w.option is not None]


def option_dest(writer: Writer) -> str:
    """The keyword a writer's `run` option arrives under: --github-benchmark -> github_benchmark_path."""
    return str(writer.option).lstrip("-").replace("-", "_") + "_path"
