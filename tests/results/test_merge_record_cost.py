"""`record` and `merge` check every sample cheaply and keep every check (issue 56): a whole list of samples is
checked at once (fields.all_numbers), and a list that fails is checked value by value, so the one line still names
the value's index; a step into a file's keys (fields.At) spells its path only when a value fails; long sample
lists are rounded to the nanosecond in one numpy operation, to the very values round() gives.
(`python benchmarks/merge_record_cost.py` measures the cost per case.)"""

from __future__ import annotations

import math
import random

import pytest

from asyncbench.errors import InputError
from asyncbench.results import fields, nanoseconds, schema
from asyncbench.results.fields import At
from asyncbench.results.schema import Report
from tests.support.helpers import ok_result

LONG = 1000  # samples in a clock of a long case
BAD_AT = 700


def _raw_with(value: object) -> dict:
    """A results file's JSON of one row of LONG samples, its done_s sample BAD_AT replaced by `value`."""
    raw = Report.new({}, {}, (ok_result("m[torch,cpu]", n=LONG),)).to_dict()
    raw["results"][0]["variants"]["matmul"]["samples"]["done_s"][BAD_AT] = value
    return raw


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (-1e-6, "a time cannot be negative"),
        (math.nan, "expected a finite number"),
        (math.inf, "expected a finite number"),
        (True, "expected a number, got bool"),
        ("0.1", "expected a number, got str"),
        (None, "expected a time, got null"),
        ([0.1], "expected a number, got list"),
    ],
)
def test_a_bad_sample_in_a_long_list_is_named_by_its_index(value, said):
    with pytest.raises(InputError) as refused:
        schema.check_file(_raw_with(value), "r.json")
    assert f"r.json: results[0].variants.matmul.samples.done_s[{BAD_AT}]: {said}" in str(refused.value)


def test_a_long_list_of_good_samples_passes_whole():
    schema.check_file(_raw_with(8), "r.json")  # an int is a time (8: the sample there, 1 + 700 / 100, so the summary holds)
    with pytest.raises(InputError, match="is not the median of the samples kept"):
        schema.check_file(_raw_with(0), "r.json")  # zero is a time too, but it moves the median the summary says


def test_all_numbers_is_the_per_value_check_at_once():
    assert fields.all_numbers([])
    assert fields.all_numbers([0, 1.5, 2], least=0)
    assert not fields.all_numbers([0.0, -0.5], least=0)
    assert not fields.all_numbers([1.0, True])
    assert not fields.all_numbers([1e308, 1e308])  # finite each, the sum is not: checked one by one, and passes
    assert not fields.all_numbers([math.inf, -math.inf])
    assert not fields.all_numbers([1.0, 10**400])


def test_a_key_path_is_spelled_when_asked_for():
    at = At("r.json") / "results" / 3 / "variants" / "sync"
    assert at.path == "results[3].variants.sync"
    assert (At("r.json", "results[0].reference") / "samples_s" / 2).path == "results[0].reference.samples_s[2]"
    assert At("r.json") / "a" / 0 == At("r.json", "a[0]")
    with pytest.raises(InputError, match=r"^r\.json: results\[3\]: no$"):
        (At("r.json") / "results" / 3).fail("no")
    with pytest.raises(InputError, match=r"^--label: no$"):
        At("--label").fail("no")


def test_long_sample_lists_are_stored_exactly_as_round_gives_them():
    generator = random.Random(56)
    values = [generator.random() * 10 ** generator.uniform(-8, 2) for _ in range(20_000)]
    values += [(k + 0.5) / 1e9 for k in range(0, 10_000, 7)]  # halves of a nanosecond: the product's error decides
    values += [1e3, 12345.678901234567, 1e12 + 0.1, -0.0, 0.0, math.nan, math.inf]
    stored = nanoseconds.nanoseconds(values)
    assert [repr(v) for v in stored] == [repr(round(v, nanoseconds.SAMPLE_DECIMALS)) for v in values]
    assert nanoseconds.nanoseconds([1, 2.5] * 40) == [round(v, 9) for v in [1, 2.5] * 40]  # ints stay ints, as round keeps them
    assert type(nanoseconds.nanoseconds([1, 2.5] * 40)[0]) is int
