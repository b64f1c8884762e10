"""An `asyncbench ab` results file: one run, both sides, the gate's settings and every case; it writes and reads itself.

`ab -o FILE` writes an ABReport as JSON (ABReport.to_json); `show`,
`record`, the forges' comment and the report writers read it back with
ABReport.load / ABReport.from_dict, every field held to its vocabulary
(results.fields, results.labels, results.paired's types) before it is
taken: a file from elsewhere may say anything, and what it says ends up in
the store, the terminal and a web page. Anything off is an InputError
naming the file and the key. What the store records of one is a read model
of this type (results.ab_file).

Older files read as they were written: before schema 4 a case states only
its id (PairedCase.ran reads its backend and device from it); before
schema 3 no family rate (`ab` has always split budget.FAMILY_ERROR);
schema 1 no run id.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from dataclasses import asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any, Mapping

from asyncbench import inputs
from asyncbench.errors import InputError
from asyncbench.results import ab_family_held as family_held
from asyncbench.results import budget, case_held, fields, recordable, units
from asyncbench.results.fields import At
from asyncbench.results.labels import Label, margin_problem
from asyncbench.results.paired import PairedCase, Side

# 1 — first version. 2 — `run_id` (uuid4 hex, made with the report): the run's identity in the history, so two
# `ab` runs that end in the same second are two runs (files of version 1 are keyed by their whole content).
# 3 — verdicts from blocks of fresh processes (results.blocks): `ratio` is the blocks' mean, `confidence` each
# interval's two-sided level, a case's `problems` (verification) and `needed_s`; labels add NOT SLOWER.
# 4 — each case's `workload`, `backend`, `device` and `params`, as results files state them: before, a reader
# parsed them out of the case id (whose name is the experiment's, not the workload's) and the params were lost.
# 5 — a case's `new_syncs` (`ab --syncs`): the sync points where head's step waits and base's does not, each
# {variant, point} with the point as results.syncs stores one (its file relative to head's tree); null where no
# census was asked for, as in older files.
# 6 — a case's `bound_changes` (`ab --bound`): per variant, each side's reading of what bounds its step, with its
# slack intervals, and whether it flipped (results.bound_change); null where `--bound` was not asked for, as in
# older files.
# 7 — `time_notes`: what the gate said of how it spent its time (engine.gate_time.time_notes: past its target and
# why, a case that waited for its only look), each a line of free text; absent (none said) in older files.
# 8 — a case's `head_margin`: the ab_margin head's config states where the one that judged it (its `margin`, the base
# side's) is another; null otherwise, as in older files. Shown under the table, as before only on stderr.
AB_SCHEMA_VERSION = 8
# The longest gate-time note a reader takes: a note names at most one case (an id of at most fields.MAX_NAME
# characters) beside about 400 of its own words; a file from elsewhere is held to it, and the writer cuts to it.
MAX_TIME_NOTE = 2000
#: the keys that make a JSON file an `asyncbench ab` results file
KEYS = ("base", "head", "cases", "max_regression")
#: how many of KEYS make a JSON object an `ab` file that is missing the others
LOOKS_AB = 2


@dataclass(frozen=True)
class ABReport:
    """One `asyncbench ab` run: both sides, the gate's settings, and every case."""

    created: str
    tool_version: str
    base: Side
    head: Side
    max_regression: float
    family_error: float
    allow_inconclusive: bool
    idle_side: str  # what keeps the side that is not measuring from competing
    cases: tuple[PairedCase, ...]
    interrupted: bool = False
    schema_version: int = AB_SCHEMA_VERSION
    #: this run's own id, made with the report: what tells two runs apart in the history
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: what the gate said of how it spent its time (past its --gate-time target, and why): shown under the table
    time_notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The report as the file states it: each compared variant or metric with `ratio` (head/base), `ratio_ci`,
        `label` and its `verdict`; numbers that are not finite as null."""
        raw = asdict(self)
        raw["time_notes"] = [_cut(fields.storable(note) or "") for note in self.time_notes]
        for case, kept in zip(raw["cases"], self.cases, strict=True):
            if kept.bound_changes is not None:  # its notes stored as free text is (fields.storable)
                case["bound_changes"] = [change.to_dict() for change in kept.bound_changes]
            case["needed_s"] = _finite(case["needed_s"])
            case["reason"] = fields.storable(case["reason"])
            case["problems"] = list(case["problems"])
            case["params"] = dict(case["params"]) if case["params"] is not None else None
            for ratio in case["ratios"]:
                for key in ("base", "head", "ratio"):
                    ratio[key] = _finite(ratio[key])
                ratio["ratio_ci"] = list(ratio["ratio_ci"]) if ratio["ratio_ci"] is not None else None
                ratio["label"] = str(ratio["label"])
                ratio["verdict"] = str(Label(ratio["label"]).verdict)
        return raw

    def to_json(self) -> str:
        """The file's text (what `ab -o` writes)."""
        return json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n"

    @classmethod
    def load(cls, path: str | Path) -> ABReport:
        """The `ab` file at `path`; InputError naming the file (and the key) for anything unusable."""
        return cls.from_dict(read_raw(path), str(path))

    @classmethod
    def from_dict(cls, raw: Any, source: str) -> ABReport:
        """The `ab` report in parsed JSON (is_ab), every field checked before it is taken."""
        at = At(source)
        top = fields.mapping(raw, at)
        missing = [key for key in KEYS if key not in top]
        if missing:
            at.fail(f"not an asyncbench `ab` results file: it has no {', '.join(missing)}")
        case_held.known_keys(top, TOP_KEYS, at)
        version = top.get("schema_version", AB_SCHEMA_VERSION)
        if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= AB_SCHEMA_VERSION:
            (at / "schema_version").fail(f"{version!r} is not an `ab` schema this asyncbench reads (at most {AB_SCHEMA_VERSION})")
        recordable.created(top.get("created"), at / "created")
        _settings(top, at)
        base = Side.from_dict(top["base"], "base", at / "base")
        head = Side.from_dict(top["head"], "head", at / "head")
        run_id = fields.run_id(top.get("run_id"), at / "run_id")
        tool_version = fields.name(top.get("tool_version", ""), at / "tool_version")
        cases = fields.listed(top["cases"], at / "cases")
        read = tuple(PairedCase.from_dict(case, at / "cases" / index, float(top["max_regression"])) for index, case in enumerate(cases))
        _one_row_each(read, at / "cases")
        if not read and top.get("time_notes"):  # before the notes, which name cases: the file's fault is its lack of one
            (at / "cases").fail("the file holds no case, yet notes its gate's time: `ab` writes a row of every case it measured")
        family_held.to_cases(top.get("family_error"), read, bool(top.get("interrupted", False)), at / "family_error")
        return cls(
            created=top["created"],
            tool_version=str(tool_version or ""),
            base=base,
            head=head,
            max_regression=float(top["max_regression"]),
            # files before schema 3 do not state it: `ab` has always split the one rate, budget.FAMILY_ERROR
            family_error=float(top.get("family_error") or budget.FAMILY_ERROR),
            allow_inconclusive=bool(top.get("allow_inconclusive", False)),
            idle_side=str(top.get("idle_side") or "not stated"),
            cases=read,
            interrupted=bool(top.get("interrupted", False)),
            schema_version=version,
            run_id=run_id,
            time_notes=_time_notes(top.get("time_notes"), at / "time_notes", [case.get("id") for case in cases if isinstance(case, dict)]),
        )


#: every key an `ab` file's top level has held, in any `ab` schema version (ABReport.to_dict: its fields; `run_id`
#: from 2, `family_error` from 3, `time_notes` from 7): the schema documents no extra keys, so another is an edit
TOP_KEYS = frozenset(entry.name for entry in dataclass_fields(ABReport))


def _one_row_each(cases: tuple[PairedCase, ...], at: At) -> None:
    """Each case once: `ab` writes one row per case id (a results file refuses a repeated id too, results.schema); a
    row copied into a file was shown twice and recorded as two points of one run (`history` counted 5 runs of 4)."""
    first: dict[str, int] = {}
    for index, case in enumerate(cases):
        if case.id in first:
            (at / index / "id").fail(f"{case.id!r} is also cases[{first[case.id]}]'s: a case is one row")
        first[case.id] = index


def is_ab(raw: Any) -> bool:
    """Whether parsed JSON looks like an `ab` results file, then read as one, strictly: it is no results file and
    has most of an `ab` file's keys (one without its cases or its head is a broken `ab` file, and said so)."""
    return isinstance(raw, dict) and "tool" not in raw and sum(key in raw for key in KEYS) >= LOOKS_AB


def read_raw(path: str | Path) -> Any:
    """A JSON file's parsed content; InputError naming the file when it is unreadable or not JSON."""
    text = inputs.read_text(path, InputError, "results file")
    try:
        return inputs.read_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(inputs.malformed(text, exc), location=str(path)) from None
    except ValueError as exc:
        raise InputError(f"not a results file: {exc}", location=str(path)) from None


def _settings(top: Mapping[str, Any], at: At) -> None:
    """The gate's settings, each held to its meaning (a file that says otherwise is not one)."""
    margin = fields.number(top["max_regression"], at / "max_regression")
    if (problem := margin_problem(margin)) is not None:  # the range `ab --max-regression` takes: a file says no other
        (at / "max_regression").fail(f"{problem}, as `ab --max-regression` takes one, not {units.percent(margin)}")
    family = fields.optional_number(top.get("family_error"), at / "family_error")
    if family is not None and not 0 < family < 1:
        (at / "family_error").fail(f"a false-alarm rate is between 0 and 1, not {family:g}")
    for key in ("allow_inconclusive", "interrupted"):
        recordable.flag(top.get(key, False), at / key)
    fields.optional_name(top.get("idle_side"), at / "idle_side")


# The two notes engine.gate_time writes of the gate's time (time_notes): one that it went past its target, and one
# per case that waited for its only look, which begins with the case's id. Each is said under the table as the tool's
# own words, so a note of another form is refused: not only its opening words (a forged "…target (--gate-time): ✅ the
# gate passes" kept them) but the whole sentence, where only times, counts and the file's own case ids may vary.
_TIME = r"[0-9][0-9.]* (?:ns|µs|ms|s)"
_CASES = r"(?P<{}>.+?)"  # a case's id of this file, or "N cases" (engine.gate_time._cases): checked after the match
_WHY_SHORT = (
    rf"as a next (?:block|round of blocks), at the latest round's pace \({_TIME}\), would have ended at {_TIME}, past "
    rf"the {_TIME} the cap allows \(the cap and a quarter of the target\)"
)
_OUTCOME = (
    r"stopped (?:without a verdict \(an error or a skip\)|decided at a look past the target|undecided at the cap"
    rf"|undecided at the most blocks a case takes \(\d+\)|undecided where more blocks would not decide"
    rf"|undecided short of the cap, {_WHY_SHORT})"
)
_SEVERAL = rf"(?:(?:both|all \d+) {_OUTCOME}|of them, \d+ {_OUTCOME}(?:, \d+ {_OUTCOME})* and \d+ {_OUTCOME})"
PAST_TARGET = re.compile(rf"the gate measured for {_TIME}(?: in all)?, past its {_TIME} target \(--gate-time\): ")
_WENT_ON = re.compile(
    rf"{PAST_TARGET.pattern}(?:"
    r"its last round of blocks, begun before the target, ended after it"
    r"|(?:"
    rf"{_CASES.format('undecided')}, undecided at (?:its|their) last look,"
    rf"(?: and {_CASES.format('unlooked1')}, with no look taken by the target,)?"
    rf"|{_CASES.format('unlooked2')}, with no look taken by the target,"
    r") went on past it, (?:"
    rf"as the cap \(--gate-time-max, {_TIME}\) allows"
    rf"|to the cap \(--gate-time-max, {_TIME}\) and {_TIME} past it, in the round under way at the cap and the blocks a "
    r"case short of its first interval, or of one robust to a wild block, still gets, begun only where the blocks' pace "
    rf"ends them within a quarter of the target past the cap \({_TIME}\)"
    # several cases that went on: a count per outcome (engine.gate_time._outcomes); older files say it as one clause
    rf"), and (?:each stopped at the look that decided it, or undecided by the cap|{_SEVERAL}|stopped at block \d+"
    # the one case that went on says why it stopped short of the cap where it did (engine.gate_time._stopped)
    rf"|stopped undecided at block \d+(?:, short of the cap, {_WHY_SHORT})?"
    r"|stopped at (?:a later look|its first look) at block \d+, decided)"
    r")"
    # why undecided cases stopped before the cap (engine.gate_time._short_of_cap): absent in older files
    rf"(?:; {_CASES.format('short')} stopped undecided short of the cap, {_WHY_SHORT})?"
)
WAITED = ": decided, but only at its one look, when the time ran out (block "
_WAITED_REST = re.compile(
    rf"\d+\): {_TIME} was planned as \d+ blocks at the gate's pace, too few for a look before the last(?:"
    r"; a --gate-time-max of about \d+s \(\d+ blocks\) plans a look at block \d+, where a verdict this clear stops, "
    r"\d+ blocks? sooner"
    r"|; no cap would stop it sooner: a look before the last comes at block \d+ at the earliest)"
)
_COUNTED = re.compile(r"\d+ cases")


def _time_note_held(note: str, case_ids: list[Any]) -> bool:
    """Whether `note` is a whole sentence of a form `ab` writes of its time, its cases this file's (_WENT_ON, WAITED)."""
    ids = {id_ for id_ in case_ids if isinstance(id_, str)}
    went_on = _WENT_ON.fullmatch(note)
    if went_on is not None:
        named = [went_on.group(key) for key in ("undecided", "unlooked1", "unlooked2", "short") if went_on.group(key) is not None]
        return all(name in ids or _COUNTED.fullmatch(name) for name in named)
    return any(note.startswith(id_ + WAITED) and _WAITED_REST.fullmatch(note[len(id_ + WAITED) :]) for id_ in ids)


def _time_notes(value: Any, at: At, case_ids: list[Any]) -> tuple[str, ...]:
    """The gate's notes on its time: each a line of bounded text in one of the forms `ab` writes, whole (the comment
    above), its cases this file's: a file from elsewhere may say anything, and what it says is shown in a terminal
    and a pull-request comment under the table, escaped there but read as the tool's own."""
    notes = tuple(fields.text(note, at / index) for index, note in enumerate(fields.optional_list(value, at)))
    for index, note in enumerate(notes):
        if len(note) > MAX_TIME_NOTE or any(end in note for end in "\n\r"):
            (at / index).fail(f"a gate-time note is one line of at most {MAX_TIME_NOTE} characters")
        if not _time_note_held(note, case_ids):
            (at / index).fail(
                f"{_shown(note)} is not a note `ab` writes of its time (the whole of one that begins 'the gate measured "
                "for …, past its … target (--gate-time): ', or with a case's id and ': decided, but only at its one look', "
                "its figures and this file's cases in their places)"
            )
    return notes


def _shown(note: str) -> str:
    """A refused note quoted in the refusal: whole where short, else its first 80 characters and an ellipsis, so
    that a cut quotation never reads as other words (a note "... the gate passes" quoted as "... the gate pass")."""
    return repr(note) if len(note) <= SHOWN_CHARS else repr(note[:SHOWN_CHARS]) + "…"


#: how much of a refused value a refusal quotes before it cuts it (with an ellipsis)
SHOWN_CHARS = 80


def _cut(note: str) -> str:
    """A note as the reader takes it back: one line, at most MAX_TIME_NOTE characters."""
    line = note.replace("\r", " ").replace("\n", " ")
    return line if len(line) <= MAX_TIME_NOTE else line[: MAX_TIME_NOTE - 1] + "…"


def _finite(value: Any) -> Any:
    return value if not isinstance(value, float) or math.isfinite(value) else None
