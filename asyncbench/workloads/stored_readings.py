"""A results file's readings, rebuilt from its own figures: a reading is never shown as the file wrote it.

A result's `reading` (the one line under its row) is the tool's word on what its figures mean, so a reader
(`show`, `compare`, `run --baseline`, `gather`, `merge`, `record`, `asyncbench.load`, a journal read in a results
file's place) does not take it from the file: a hand-edited "the step is 10x faster" beside figures that say
otherwise would print as asyncbench's own conclusion. Each ok result's reading is made again from its stored
figures by the rule of the workload that wrote it, wherever the tool holds that rule without importing a user's
code:

- a built-in workload (`BUILT_IN`, by the result's `workload` name: a user's workload is named by a reference,
  never a built-in's name, plugins.find);
- the step form (a user's `@asyncbench.step`): told by its signature (results.step_figures.is_step_form), read by
  the step form's own rule, which needs no step function (step_reading.StepForm).

A run makes its reading from the result as its file stores it (Workload.describe), so a genuine file's rebuilt
reading is the very line it holds, and it renders exactly as it did.

A user's own Workload class is the one reading the tool cannot make again without importing and running that
user's module, which reading a file never does (a file names the module; it may be gone, slow, or anyone's). Its
stored words are dropped, not shown: they cannot be checked against the figures beside them, and a line under a
row reads as the tool's; the row's metrics, with their intervals, still show what was measured, and `run` shows
such a workload's reading where its own code has just made it. A result that is not ok has no reading.
"""

from __future__ import annotations

import dataclasses

from asyncbench.results.model import Result
from asyncbench.results.schema import Report
from asyncbench.results.step_figures import is_step_form
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.base import Workload
from asyncbench.workloads.step_reading import StepForm

#: the step form's rule, with no step: reads a step's stored result
_STEP_FORM = StepForm()


def rule_for(result: Result) -> Workload | None:
    """The workload whose rule rebuilds `result`'s reading: its built-in, or the step form for a step's result;
    None for a user's own Workload class (its reading cannot be made without its code)."""
    built_in = BUILT_IN.get(result.workload)
    if built_in is not None:
        return built_in
    return _STEP_FORM if is_step_form(result) else None


def rebuilt(result: Result) -> Result:
    """`result` with its reading made again from its stored figures (None where no rule the tool holds can make
    it, or where the result is not ok): see the module docstring."""
    rule = rule_for(result)
    reading = rule.stored_reading(result) if rule is not None else None
    return result if reading == result.reading else dataclasses.replace(result, reading=reading)


def reread(report: Report) -> Report:
    """`report` with every result's reading rebuilt (`rebuilt`)."""
    results = tuple(rebuilt(result) for result in report.results)
    changed = any(new is not old for new, old in zip(results, report.results, strict=True))
    return dataclasses.replace(report, results=results) if changed else report
