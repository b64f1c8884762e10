"""A results file of schema 12, written by `run` (tests/results/golden/check_details_v12.json: `run --quick --syncs` of
sync_async and a step on numpy, ten checks: passed, failed by a far miss and by a percentage, straddling, not measured,
a census line), read back with every check's detail as written.

The reader holds a check's detail of the current schema to the very sentence its stored figures give
(results.check_detail): a change to those words would make every file of the version before unreadable, a user's
`--baseline` and history among them. This file is the version's words; where the test fails, the words changed:
bump SCHEMA_VERSION (results/schema.py, whose history says so), so that files of 12 are read in their own words."""

from __future__ import annotations

import json
from pathlib import Path

from asyncbench.results.schema import Report

WRITTEN = Path(__file__).parent / "golden" / "check_details_v12.json"
BUMP = "a check detail's words changed: bump SCHEMA_VERSION (results/schema.py) so that files of 12 keep theirs"


def test_a_file_of_12_in_its_own_words_is_read_with_every_detail_as_written():
    raw = json.loads(WRITTEN.read_text())
    assert raw["schema_version"] == 12
    stored = [check["detail"] for result in raw["results"] for check in result["checks"]]
    try:
        report = Report.load(WRITTEN)
    except Exception as refused:  # noqa: BLE001 - the reader's one line, shown with what to do
        raise AssertionError(f"{BUMP}: {refused}") from None
    assert [check.detail for result in report.results for check in result.checks] == stored, BUMP
    verdicts = sorted(str(check.verdict) for result in report.results for check in result.checks)
    assert len(verdicts) == 10
    assert {"pass", "fail", "inconclusive", "not measured"} <= set(verdicts), verdicts
