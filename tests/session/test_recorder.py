"""The one recorder (session/recorder.py): the store it names in its "recorded in" line is shown masked, and a store
that refuses the record after the run measured ends the command with exit 3, its results kept."""

from __future__ import annotations

from asyncbench.history import target
from asyncbench.history.store import StoreError
from asyncbench.session import recorder
from asyncbench.verdicts import outcome
from tests.support.helpers import ok_result, report_of


def test_the_recorded_in_line_shows_the_store_masked():
    class Done:
        new, run, points = True, 1, 3

    class Store:
        target = target.resolve("postgresql://ci@db.example/bench?password=s3cr%40t%20w%2Frd")

        def record(self, *args, **kwargs):
            return Done()

    said: list[str] = []
    recorder.record(Store(), [(None, None)], None, said.append, None)
    assert len(said) == 1
    assert "recorded in postgresql://ci@db.example/bench?password=***" in said[0]
    assert "s3cr" not in said[0]


def test_a_record_that_fails_after_the_run_measured_exits_3_with_the_results_kept(tmp_path):
    class Refusing:
        target = target.resolve(str(tmp_path / "h.sqlite"))

        def record(self, report, label=None, source=None):
            raise StoreError("history h.sqlite: cannot record: database is locked")

    said: list[str] = []
    report = report_of([ok_result("matmul[numpy,cpu]")])  # what the run measured
    ended = recorder.record(Refusing(), [(report, str(tmp_path / "r.json"))], None, said.append, outcome.judge(report))
    assert ended.code == 3
    assert any("cannot record" in line for line in said)
