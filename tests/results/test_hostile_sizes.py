"""A results file a colleague sent, held to sizes and shapes no run writes: a 70,000-character string in its
environment is refused by `show` and `record` naming its key (the store kept a 50 MB one for good), a real run's file
loads, and a file that is no JSON at all (an HTML report) is called that, not a truncated one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asyncbench.results import recordable
from tests.support.cli import in_process, refused


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sizes")
    done = in_process("run", "-w", "sync_async", "-b", "numpy", "-d", "cpu", "--quick", "-o", "a.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "a.json"


def test_a_real_file_s_strings_are_within_the_limit(saved: Path) -> None:
    assert in_process("show", saved.name, cwd=saved.parent).returncode == 0


@pytest.mark.parametrize("command", ["show", "record"])
def test_a_string_longer_than_any_run_writes_is_refused_naming_its_key(saved: Path, tmp_path: Path, command: str) -> None:
    raw = json.loads(saved.read_text())
    raw["environment"]["notes"] = "x" * (recordable.MAX_STRING_CHARS + 1)
    (tmp_path / "big.json").write_text(json.dumps(raw))
    refused(in_process(command, "big.json", cwd=tmp_path), "big.json", "environment.notes", "longer than any value a run writes")


@pytest.mark.parametrize("command", ["show", "compare", "record"])
def test_an_environment_padded_past_any_run_s_values_is_refused(saved: Path, tmp_path: Path, command: str) -> None:
    """A trial padded a real file's environment with a list of 1.5s: 5 MB took `compare` 44 s and 1.28 GB, printed
    whole as a difference; `record` stored 20 MB of it for good. Past MAX_ITEMS values it is refused in one line."""
    raw = json.loads(saved.read_text())
    raw["environment"]["junk"] = [1.5] * recordable.MAX_ITEMS
    (tmp_path / "big.json").write_text(json.dumps(raw))
    args = [command, "big.json", *((str(saved),) if command == "compare" else ())]
    refused(in_process(*args, cwd=tmp_path), "big.json", "environment", f"more than {recordable.MAX_ITEMS:,} values")


def test_an_html_file_is_no_json_file_and_a_cut_one_is_truncated(saved: Path, tmp_path: Path) -> None:
    (tmp_path / "report.html").write_text("\n  <!DOCTYPE html><html><body>report</body></html>\n")
    said = refused(in_process("show", "report.html", cwd=tmp_path), "report.html", "not a JSON file")
    assert "truncated" not in said
    (tmp_path / "cut.json").write_text(saved.read_text()[:500])
    refused(in_process("show", "cut.json", cwd=tmp_path), "cut.json", "not valid JSON (truncated?)")


@pytest.mark.parametrize("value", [1e300, -1.5e300])
def test_a_refused_number_is_quoted_short(saved: Path, tmp_path: Path, value: float) -> None:
    """A refused number of 300 digits reads short in `show`'s one line (a JSON integer that long is refused as one)."""
    raw = json.loads(saved.read_text())
    raw["results"][0]["sampling"]["rounds"] = value
    (tmp_path / "big.json").write_text(json.dumps(raw))
    said = refused(in_process("show", "big.json", cwd=tmp_path), "big.json", "sampling.rounds")
    assert "e+300" in said
    assert "0" * 20 not in said, said
