"""Progress on stderr while cases run: which case, how many rounds, how noisy so far, elapsed time."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from asyncbench.report import escaping
from asyncbench.results import units
from asyncbench.results.model import Case, Result
from asyncbench.results.model import Progress as MeasureProgress


def bar(console: Console, label: str) -> Progress:
    """A transient progress line on `console`: spinner, `label`, bar, done of total, the task's detail, time."""
    return Progress(
        SpinnerColumn(),
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


class ProgressDisplay:
    """Progress on stderr while cases run: which case, how many samples, elapsed time.

    Disabled (every method a no-op) when stderr is not a terminal or the user
    passed --no-progress, so logs and CI output stay clean.
    """

    def __init__(self, enabled: bool, console: Console):
        self._progress = bar(console, "{task.description}") if enabled else None
        self._task: Any = None

    def __enter__(self) -> ProgressDisplay:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()

    def start(self, index: int, total: int, case: Case) -> None:
        if self._progress is None:
            return
        if self._task is None:
            self._task = self._progress.add_task(escaping.rich(case.id), total=total, detail="")
        # the description is read as markup by its column: a case id is data (report.escaping)
        self._progress.update(self._task, completed=index, description=escaping.rich(case.id), detail="")

    def update(self, progress: MeasureProgress) -> None:
        if self._progress is not None and self._task is not None:
            noise = "±?" if progress.rel_noise == float("inf") else f"±{units.percent(progress.rel_noise)}"
            rounds = f"{progress.rounds} round{'' if progress.rounds == 1 else 's'}"
            self._progress.update(self._task, detail=f"{rounds}, {noise}")

    def finish(self, result: Result) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)
