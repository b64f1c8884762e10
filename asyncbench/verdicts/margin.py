"""A ratio's interval against the margin: label_of, the one place a comparison's label is decided, the margins a
gate takes (margin_problem, kept beside label_of in results.labels so that an `ab` file's reader holds the
margins it states to the same range), and `--max-regression` read from the command line (parse_threshold).

Both comparisons of times call label_of: a run against a baseline
(verdicts.compare) and each paired verdict of an `ab` run
(engine.paired). The verdict is a test against the margin, never against
"no difference": testing "different from 1, and the median beyond the
margin" called a true +8% change SLOWER 11% of the time at a 10% margin.
The rule itself lives beside the words it decides (results.labels.label_of),
so that an `ab` file's reader, a layer below this one, holds a stored label
to the very rule that wrote it; it is the same function here.
"""

from __future__ import annotations

import math

from asyncbench.errors import InputError
from asyncbench.results.labels import MARGIN_MAX, label_of, margin_problem

__all__ = ["MARGIN_MAX", "ambiguous", "label_of", "margin_problem", "parse_threshold", "plain_number"]


def parse_threshold(text: str) -> float:
    """'10%' or '7.5 %' -> 0.10, 0.075; a plain number is an InputError: 0.05 means 5% to one reader and 0.05% to
    another (a config's `ab_margin` refuses it for the same reason, spec.schema.coerce_setting), so the margin is
    written with its %, here as there."""
    stripped = str(text).strip()
    if not stripped.endswith("%") and plain_number(stripped):
        raise InputError(f"--max-regression {text!r}: {ambiguous(stripped)}")
    if not stripped.endswith("%"):  # 5ms, ten: no number of another unit is a margin
        raise InputError(f"--max-regression {text!r}: a margin is a percentage of the time, such as 5% or 0.5%")
    try:
        value = float(stripped.removesuffix("%").strip()) / 100
    except ValueError:
        raise InputError(f"--max-regression {text!r}: expected a percentage such as 10% or 2.5%") from None
    problem = margin_problem(value)
    if problem:
        raise InputError(f"--max-regression {text!r}: {problem} (at 0% no interval reads SAME)")
    return value


def ambiguous(number: str) -> str:
    """The refusal of a plain number as a margin (--max-regression's or a config's ab_margin), in the user's own
    number: `5` may mean 5%, or 500% as a fraction (as max_rel_noise reads one); each reading that is a margin is
    offered as the form to write, and a number that is a margin neither way is refused as out of range. (It said
    "0.05 may mean 5% or 0.05%" of a 5 the user typed, a number they never wrote.)"""
    as_fraction = float(number) * 100
    readings = [(f"{number}%", float(number) / 100), (f"{as_fraction:g}%", as_fraction / 100)]
    written = [form for form, margin in readings if margin_problem(margin) is None]
    if not written:  # 0, 1e300: a margin neither way
        return f"{margin_problem(float(number) / 100)}, written with its % (such as 5% or 0.5%)"
    offered = " or ".join(dict.fromkeys(written))
    return (
        f"write the margin with its %, such as {offered} (a plain number is ambiguous: "
        f"{number} may mean {number}%, or {as_fraction:g}% as a fraction)"
    )


def plain_number(text: str) -> bool:
    """Whether `text` is a number with no unit (5, 0.05), the one kind of margin whose reading is ambiguous."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
