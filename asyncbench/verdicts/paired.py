"""What an `asyncbench ab` run concludes: the exit code and every reason for it.

SLOWER fails the gate (exit 1); so does INCONCLUSIVE unless the user allows
it (a gate that cannot tell must not pass silently), a case that ran ok on
base and not on head, a side whose results failed the workload's own
verification (a head that computes the wrong thing fast must not pass), and
a run that compared nothing. SAME, FASTER and NOT SLOWER all pass: the
gate's question is one-sided. A case that errored
is exit 3, as in `run`.
"""

from __future__ import annotations

import math

from asyncbench.errors import EXIT_ERRORS, EXIT_GATE, EXIT_OK
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.model import Verdict
from asyncbench.verdicts import undecided
from asyncbench.verdicts.outcome import Outcome


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def judge(report: ABReport) -> Outcome:
    """The exit code of an ab run and why, the reasons that set it first."""
    errors: list[str] = []
    gates: list[str] = []
    errored = [c for c in report.cases if c.status == "error" and not c.lost]
    if errored:
        errors.append(f"{_plural(len(errored), 'case')} errored: {', '.join(c.id for c in errored)}")
    rows = [(case.id, ratio) for case in report.cases for ratio in case.ratios]
    margins = {case.id: report.max_regression if case.margin is None else case.margin for case in report.cases}
    slower = [f"{case_id} {r.name} (beyond {margins[case_id] * 100:.3g}%)" for case_id, r in rows if r.label == Label.SLOWER]
    unsure = [f"{case_id} {r.name}" for case_id, r in rows if r.verdict == Verdict.INCONCLUSIVE]
    # a case whose note says more time may never decide it (needed_s inf) is promised nothing by a longer cap
    never = sorted({c.id for c in report.cases for r in c.ratios if r.verdict == Verdict.INCONCLUSIVE and c.needed_s == math.inf})
    hopeful = len(never) < len({case_id for case_id, r in rows if r.verdict == Verdict.INCONCLUSIVE})
    if slower:
        gates.append(f"{_plural(len(slower), 'verdict')} SLOWER beyond its margin: {', '.join(slower)}")
    if unsure and not report.allow_inconclusive:
        gates.append(
            f"{_plural(len(unsure), 'verdict')} INCONCLUSIVE ({undecided.INTERVAL.why}): "
            f"{', '.join(unsure)}; "
            + (
                "a longer --gate-time-max (the cap undecided cases may go on to) may decide "
                + ("them (each case says how much), " if not never else f"those its case's note gives a time for, not {', '.join(never)}, ")
                if hopeful
                else f"more time may never decide {', '.join(never)} (each case says why), "
            )
            + "--allow-inconclusive lets them pass"
        )
    # what a side's verification said is its workload's words (the user's code): quoted as data (report.paired's too)
    wrong = [f"{c.id} ({side}: {said!r})" for c in report.cases for side, _, said in (p.partition(": ") for p in c.problems)]
    if wrong:
        gates.append(f"{_plural(len(wrong), 'result')} failed verification: {', '.join(wrong)}")
    lost = [c.id for c in report.cases if c.lost]
    if lost:
        gates.append(f"{_plural(len(lost), 'case')} ok on base did not run ok on head: {', '.join(lost)}")
    if not rows:
        gates.append("nothing was compared: no case ran on both sides")
    code = EXIT_ERRORS if errors else EXIT_GATE if gates else EXIT_OK
    return Outcome(code, tuple(errors + gates))
