import json

import pytest

from asyncbench.results import schema as results
from asyncbench.results.model import OK, SKIPPED, Memory, Result, Samples, VariantResult
from asyncbench.results.stats import summarize


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
            metrics={"speedup": 1.5, "model_error": float("nan")},
        ),
        Result("e[cupy,auto]", "e", "sync_async", "cupy", "auto", {}, SKIPPED, reason="cupy not installed"),
    )
    return results.new_report({"name": "c"}, {"python": "3"}, rows)


def test_round_trip_keeps_every_sample_and_maps_nan_to_null(tmp_path):
    path = tmp_path / "r.json"
    results.save(report(), path)
    raw = json.loads(path.read_text())
    assert raw["schema_version"] == results.SCHEMA_VERSION
    assert raw["tool"]["name"] == "asyncbench"
    assert raw["results"][0]["metrics"]["model_error"] is None
    assert raw["results"][0]["variants"]["async"]["samples"]["device_s"] == [0.5, 0.6, 0.7]
    assert raw["results"][0]["variants"]["sync"]["done_s"]["median"] == 2.0
    loaded = results.load(path)
    assert loaded.results[0].variants["async"].device_s.median == 0.6
    assert loaded.results[1].reason == "cupy not installed"


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text("old complete content")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(results.os, "fsync", full_disk)
    with pytest.raises(OSError):
        results.save(report(), path)
    assert path.read_text() == "old complete content"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.parametrize(
    "content, fragment",
    [
        ('{"schema_version": 1, "tool": {"name": "asyncbench"}, "results": [', "truncated"),
        ('{"benchmarks": []}', "not an asyncbench results file"),
        ('{"schema_version": 99, "tool": {"name": "asyncbench"}, "results": []}', "newer"),
        ('{"schema_version": 1, "tool": {"name": "asyncbench"}, "results": [{"id": 1}]}', "malformed"),
    ],
)
def test_unusable_results_files_are_input_errors(tmp_path, content, fragment):
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(results.ResultsFileError, match=fragment):
        results.load(path)


def test_check_writable_catches_missing_directory_and_directory_target(tmp_path):
    with pytest.raises(results.InputError, match="does not exist"):
        results.check_writable(tmp_path / "nope" / "r.json")
    with pytest.raises(results.InputError, match="is a directory"):
        results.check_writable(tmp_path)
    results.check_writable(tmp_path / "ok.json")
    assert list(tmp_path.iterdir()) == []
