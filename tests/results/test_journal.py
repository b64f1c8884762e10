"""The journal: one record appended per finished case, whatever came before; a torn or failed record loses nothing else."""

from __future__ import annotations

import dataclasses
import errno
import os

import pytest

from asyncbench.results import journal, records, schema
from tests.support.helpers import ok_result, report_of


def started(tmp_path):
    return journal.Journal.start(tmp_path / "r.json", report_of([]))


def lines(*results):
    return [records.result_line(r) for r in results]


def test_a_journal_gives_back_every_case_appended_and_says_the_run_did_not_end(tmp_path):
    log = started(tmp_path)
    cases = [ok_result(f"m[torch,cpu,n={i}]") for i in range(3)]
    log.append(lines(*cases[:1]))
    log.append(lines(*cases[1:]))
    recovered = journal.read(tmp_path / "r.json.journal")
    assert [r.id for r in recovered.report.results] == [r.id for r in cases]
    assert recovered.report.results[2].variants["matmul"].done_s == cases[2].variants["matmul"].done_s
    assert recovered.report.interrupted is True
    assert recovered.torn == 0


def test_an_append_writes_only_its_own_record_however_many_came_before(tmp_path):
    """What makes saving flat: the 1,000th case costs one line, as the first did (the file is not rewritten)."""
    log = started(tmp_path)
    path = tmp_path / "r.json.journal"
    grown = []
    for i in range(200):
        before = path.stat().st_size
        result = ok_result(f"m[torch,cpu,n={i:04}]")
        log.append(lines(result))
        grown.append(path.stat().st_size - before)
        assert grown[-1] == len(records.result_line(result)) + 1
    assert len(set(grown)) == 1  # the same ids' length, the same bytes: nothing earlier is written again


def test_a_record_cut_short_by_a_kill_is_dropped_and_counted_and_the_rest_read(tmp_path):
    log = started(tmp_path)
    log.append(lines(ok_result("m[torch,cpu,n=1]"), ok_result("m[torch,cpu,n=2]")))
    path = tmp_path / "r.json.journal"
    with open(path, "a") as handle:
        handle.write(records.result_line(ok_result("m[torch,cpu,n=3]"))[:57])  # kill -9 in the middle of a write
    recovered = journal.read(path)
    assert [r.id for r in recovered.report.results] == ["m[torch,cpu,n=1]", "m[torch,cpu,n=2]"]
    assert recovered.torn == 1


def test_a_failed_append_is_cut_back_so_the_next_append_leaves_no_torn_record(tmp_path, monkeypatch):
    log = started(tmp_path)
    log.append(lines(ok_result("m[torch,cpu,n=1]")))
    real_sync = journal._sync

    def disk_full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(journal, "_sync", disk_full)
    with pytest.raises(OSError, match="No space"):
        log.append(lines(ok_result("m[torch,cpu,n=2]")))
    monkeypatch.setattr(journal, "_sync", real_sync)
    log.append(lines(ok_result("m[torch,cpu,n=2]"), ok_result("m[torch,cpu,n=3]")))
    recovered = journal.read(tmp_path / "r.json.journal")
    assert [r.id for r in recovered.report.results] == ["m[torch,cpu,n=1]", "m[torch,cpu,n=2]", "m[torch,cpu,n=3]"]
    assert recovered.torn == 0


def test_removing_the_journal_deletes_it_and_a_journal_that_cannot_start_leaves_nothing(tmp_path, monkeypatch):
    log = started(tmp_path)
    log.remove()
    assert list(tmp_path.iterdir()) == []

    def disk_full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(journal, "_sync", disk_full)
    with pytest.raises(OSError):
        started(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "not an asyncbench journal"),
        ('{"schema_version": 4}\n', "not an asyncbench journal"),
        ('{"journal": {"schema_version": 99, "tool": {"name": "asyncbench"}}}\n', "newer"),
        ('{"journal": {"schema_version": 4, "tool": {"name": "other"}}}\n', "not an asyncbench results file"),
    ],
)
def test_what_is_not_a_journal_is_refused_with_a_reason(tmp_path, text, message):
    path = tmp_path / "r.json.journal"
    path.write_text(text)
    with pytest.raises(schema.ResultsFileError, match=message):
        journal.read(path)


def test_a_workloads_metric_declarations_are_recorded_once_and_given_back_to_each_of_its_cases(tmp_path):
    from asyncbench.results.model import MetricInfo

    infos = {"gflops": MetricInfo("GFLOP/s", "products per second")}
    cases = [dataclasses.replace(ok_result(f"m[torch,cpu,n={i}]"), metric_info=infos) for i in range(2)]
    declared: records.Declared = {}
    written = []
    for case in cases:
        if records.declare(declared, case) is not None:
            written.append(journal.declared(case.workload, infos))
        written.append(records.result_line(case, declared))
    assert len(written) == 3
    assert all("products per second" not in record for record in written[1:])  # said once, before the first case
    log = started(tmp_path)
    log.append(written)
    recovered = journal.read(tmp_path / "r.json.journal")
    assert [r.metric_info for r in recovered.report.results] == [infos, infos]
