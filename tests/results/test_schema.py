"""The results schema: atomic saves, loading (old versions, foreign and broken files), and what a file may hold."""

import json
import os

import pytest

from asyncbench.results import schema, writing
from asyncbench.results.model import OK, SKIPPED, Memory, Result, Samples, VariantResult
from asyncbench.results.schema import Report
from asyncbench.results.stats import summarize
from tests.support.helpers import ok_result, report_of


def variant(values=(1.0, 2.0, 3.0), device=None) -> VariantResult:
    return VariantResult(
        samples=Samples(issue_s=tuple(values), done_s=tuple(values), device_s=device),
        issue_s=summarize(values),
        done_s=summarize(values),
        device_s=summarize(device) if device else None,
        memory=Memory(host_rss_bytes=123, device_peak_bytes=None),
    )


def report(**kwargs):
    rows = (
        Result(
            "e[torch,cpu]",
            "e",
            "sync_async",
            "torch",
            "cpu",
            {"n_ops": 3},
            OK,
            variants={"sync": variant(), "async": variant(device=(0.5, 0.6, 0.7))},
            metrics={"speedup": 1.0, "model_error": float("nan")},  # each round's sync / async: 1 (one samples)
        ),
        Result("e[cupy,auto]", "e", "sync_async", "cupy", "auto", {}, SKIPPED, reason="cupy not installed"),
    )
    return Report.new({"name": "c"}, {"python": "3"}, rows)


def test_round_trip_keeps_every_sample_and_maps_nan_to_null(tmp_path):
    path = tmp_path / "r.json"
    report().save(path)
    raw = json.loads(path.read_text())
    assert raw["schema_version"] == schema.SCHEMA_VERSION
    assert raw["tool"]["name"] == "asyncbench"
    assert raw["results"][0]["metrics"]["model_error"] is None
    assert raw["results"][0]["variants"]["async"]["samples"]["device_s"] == [0.5, 0.6, 0.7]
    assert raw["results"][0]["variants"]["sync"]["done_s"]["median"] == 2.0
    loaded = Report.load(path)
    assert loaded.results[0].variants["async"].device_s.median == 0.6
    assert loaded.results[1].reason == "cupy not installed"


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text("old complete content")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writing.os, "fsync", full_disk)
    with pytest.raises(OSError):
        report().save(path)
    assert path.read_text() == "old complete content"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.parametrize(
    "content, fragment",
    [
        ('{"schema_version": 1, "tool": {"name": "asyncbench"}, "results": [', "truncated"),
        ('{"benchmarks": []}', "not an asyncbench results file"),
        ('{"schema_version": 99, "tool": {"name": "asyncbench"}, "results": []}', "newer"),
        ('{"schema_version": 1, "tool": {"name": "asyncbench"}, "results": [{"id": 1}]}', "created: expected a string"),
        ('{"schema_version": 1, "tool": {"name": "asyn', "Unterminated string starting at line 1$"),  # json's own "at" said once
    ],
)
def test_unusable_results_files_are_input_errors(tmp_path, content, fragment):
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(schema.ResultsFileError, match=fragment):
        Report.load(path)


def test_an_ab_file_given_where_a_results_file_goes_is_named_for_what_it_is(tmp_path):
    """A new user ran `asyncbench show ab.json` and was told it was no asyncbench file at all."""
    import json

    from asyncbench.results import ab_report

    path = tmp_path / "ab.json"
    path.write_text(json.dumps(dict.fromkeys(ab_report.KEYS, {})))
    with pytest.raises(schema.ResultsFileError, match="an `asyncbench ab` file, not a results file.*asyncbench record"):
        Report.load(path)
    # and where its verdicts are read again (a user given `compare X ab.json` was not told): `show` re-renders it
    with pytest.raises(schema.ResultsFileError) as refused:
        Report.load(path)
    assert f"`asyncbench show {path}` prints them again" in str(refused.value)


def test_check_writable_catches_missing_directory_and_directory_target(tmp_path):
    with pytest.raises(schema.InputError, match="does not exist"):
        writing.check_writable(tmp_path / "nope" / "r.json")
    with pytest.raises(schema.InputError, match="is a directory"):
        writing.check_writable(tmp_path)
    writing.check_writable(tmp_path / "ok.json")
    assert list(tmp_path.iterdir()) == []


def test_results_files_get_the_permissions_the_umask_gives(tmp_path):
    path = tmp_path / "r.json"
    previous = os.umask(0o022)
    try:
        report_of([ok_result("m[torch,cpu]")]).save(path)
    finally:
        os.umask(previous)
    assert path.stat().st_mode & 0o777 == 0o644


def test_show_reads_version_1_files_whose_intervals_were_min_max():
    raw = json.loads(report_of([ok_result("m[torch,cpu]")]).to_json())
    raw["schema_version"] = 1
    for row in raw["results"]:
        for key in ("bounds", "sampling", "unavailable", "asynchronous"):
            row.pop(key)
    report = Report.from_dict(raw)
    assert report.results[0].bounds == {}
    assert report.results[0].sampling is None


def test_the_results_file_holds_one_result_per_line_and_samples_to_the_nanosecond(tmp_path):
    """Compact enough for 10,000 cases (about 3 KB a case), still read line by line; nothing finer than the clocks lost."""
    result = ok_result("m[torch,cpu]")
    text = report_of([result, ok_result("m[numpy,cpu]")]).to_json()
    lines = text.splitlines()
    assert sum(1 for line in lines if line.startswith('{"id":')) == 2
    stored = json.loads(text)["results"][0]["variants"]["matmul"]["samples"]["done_s"]
    assert stored == [round(v, 9) for v in result.variants["matmul"].samples.done_s]
    assert json.loads(report_of([]).to_json())["results"] == []


#: an error's message as a user's code may raise it: a terminal's colours, a bell, a form feed
COLOURED = "ValueError: \x1b[31mRED\x1b[0m\x07 and\x0c more\nsecond line\tTab"


def test_a_reason_with_control_characters_is_stored_so_that_the_strict_readers_take_the_file_back(tmp_path):
    """The writer escapes what its readers refuse (before: `show`, `compare` and `--baseline` refused a results file
    asyncbench wrote itself, `results[1].reason: holds a control character`, and an ab file likewise)."""
    import dataclasses

    from asyncbench.results import ab_file, ab_report, paired
    from asyncbench.results.labels import Label

    rows = report().results
    errored = dataclasses.replace(rows[1], status="error", reason=COLOURED, note="x" * 30_000)
    path = tmp_path / "r.json"
    Report.new({"name": "c"}, {"python": "3"}, (rows[0], errored)).save(path)
    loaded = Report.load(path)
    assert loaded.results[1].reason == "ValueError: \\x1b[31mRED\\x1b[0m\\x07 and\\x0c more\nsecond line\tTab"
    assert len(loaded.results[1].note) <= 20_000

    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11")
    ratio = paired.PairedRatio("matmul", paired.VARIANT, "s", 0.010, 0.013, 1.3, (1.22, 1.38), Label.SLOWER)
    cases = (paired.PairedCase("matmul[numpy,cpu]", "ok", ratios=(ratio,), rounds=40), paired.PairedCase("b[numpy,cpu]", "error", COLOURED))
    ab = ab_report.ABReport(
        "2026-11-23T12:00:00+00:00", "0.1.0", dataclasses.replace(side, name="base"), side, 0.05, 0.01, False, "SIGSTOP", cases
    )
    ab_path = tmp_path / "ab.json"
    ab_path.write_text(ab.to_json())
    raw = ab_report.read_raw(ab_path)
    assert ab_file.from_dict(raw, str(ab_path)).cases[1].reason.startswith("ValueError: \\x1b[31mRED")


@pytest.mark.parametrize("key", ["speedup", "t1_s"])
def test_a_bool_where_a_results_file_holds_a_metric_is_refused(tmp_path, key):
    """JSON's `true` is no measurement, though Python's bool is an int: `show` printed `gflops 1 GFLOP/s [23.4–62.6]`,
    a point outside its own interval, and `record` refused it as one ("a point 1 lies outside")."""
    path = tmp_path / "r.json"
    report().save(path)
    raw = json.loads(path.read_text())
    raw["results"][0]["metrics"][key] = True
    path.write_text(json.dumps(raw))
    with pytest.raises(schema.InputError, match=rf"results\[0\]\.metrics\.{key}: expected a number, got bool"):
        Report.load(path)


def test_a_user_workloads_yes_or_no_metric_is_written_as_a_number_its_reader_takes(tmp_path):
    """A user's run_metrics may answer True (a check it made): the writer stores it as 1, as the runner's own
    `verified` is, so the file's reader, which refuses a bool where a number goes, takes it back."""
    import dataclasses

    rows = report().results
    mine = dataclasses.replace(rows[0], id="e[torch,cpu]", workload="mine.py:Mine", metrics={"checked": True, "failed": False})
    path = tmp_path / "r.json"
    Report.new({"name": "c"}, {"python": "3"}, (mine,)).save(path)
    stored = json.loads(path.read_text())["results"][0]["metrics"]
    assert [(value, type(value)) for value in stored.values()] == [(1.0, float), (0.0, float)]  # `true` == 1.0 too
    assert Report.load(path).results[0].metrics == {"checked": 1.0, "failed": 0.0}
