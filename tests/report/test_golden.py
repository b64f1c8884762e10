"""Golden files pin what every writer prints for one fixed report: terminal, markdown, CSV, JSON, github-benchmark.

The report holds one of each thing a writer must lay out: a swept
experiment on an asynchronous backend (an issue column and clock bars),
metrics with intervals and stored units, a stored reading, checks that
pass, fail and straddle, a warning, a note on sampling that stopped short,
an errored case, a backend that is not here, and the run's outcome.

After an intended change of the output, regenerate them and read the diff:

    ASYNCBENCH_UPDATE_GOLDEN=1 python -m pytest tests/report/test_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rich.console import Console

from asyncbench.report import terminal, view
from asyncbench.report.writers import WRITERS
from asyncbench.verdicts import outcome
from tests.support.golden import golden_report

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("ASYNCBENCH_UPDATE_GOLDEN") == "1"


def rendered() -> dict[str, str]:
    report = golden_report()
    shown = view.build(report, None, outcome.judge(report))
    console = Console(width=120, record=True, color_system=None, force_terminal=False, file=open(os.devnull, "w"))  # noqa: SIM115
    terminal.print_report(shown, console)
    formats = {"terminal.txt": console.export_text()}
    for name, filename in (
        ("markdown", "report.md"),
        ("csv", "report.csv"),
        ("json", "report.json"),
        ("github-benchmark", "github-benchmark.json"),
    ):
        content = WRITERS[name].render(shown, filename)
        formats[filename] = content if isinstance(content, str) else content.decode()
    return formats


@pytest.mark.parametrize("filename", ["terminal.txt", "report.md", "report.csv", "report.json", "github-benchmark.json"])
def test_every_writer_prints_the_golden_report_as_pinned(filename):
    text = rendered()[filename]
    path = GOLDEN / filename
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{filename} changed: regenerate with ASYNCBENCH_UPDATE_GOLDEN=1 and read the diff"


def test_terminal_and_markdown_say_the_same_things():
    """One view model: every metric line, reading, note, warning and check is in both."""
    formats = rendered()
    shown = view.build(golden_report())
    for experiment in shown.experiments:
        for case in experiment.cases:
            for text in (case.metrics, case.reading, case.sampling_note, *case.warnings, *(c.detail for c in case.checks)):
                if text:
                    assert " ".join(text.split()) in " ".join(formats["terminal.txt"].split())
                    assert text in formats["report.md"]
