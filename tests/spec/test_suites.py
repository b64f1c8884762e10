"""The suites shipped in the package: a CONFIG that names one runs it from an installed wheel (no clone), a file
of that name wins, `list` names them, and configs/ is the same files (links into the package, never copies)."""

from __future__ import annotations

from pathlib import Path

import pytest

from asyncbench.errors import InputError
from asyncbench.spec import config, suites
from tests.support.cli import invoke

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = ROOT / "asyncbench" / "suites"


def test_a_suite_loads_by_its_name_or_its_file_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configs/ here: as after `pip install asyncbench`
    by_name, by_file_name = config.load("async-computation"), config.load("async-computation.yaml")
    from_clone = config.load(ROOT / "configs" / "async-computation.yaml")
    assert by_name.experiments == by_file_name.experiments == from_clone.experiments
    assert by_name.name == "async-computation"
    assert by_name.source == "<built-in async-computation.yaml>"


def test_a_file_of_that_name_wins_over_the_suite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ci-gate").write_text("name: mine\nexperiments:\n  - workload: sync_async\n", encoding="utf-8")
    assert [e.workload for e in config.load("ci-gate").experiments] == ["sync_async"]


def test_a_name_that_is_neither_a_file_nor_a_suite_says_where_the_suites_are_listed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"no such file, nor a suite of that name \(asyncbench list names them\)"):
        config.load("async-computatoin")
    for path in ("configs/async-computation.yaml", "./async-computation"):  # a path is a path: no suite is looked for
        with pytest.raises(InputError) as raised:
            config.load(path)
        assert raised.value.message == "no such file"


def test_run_takes_a_suite_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = invoke("validate", "async-computation", "ci-gate")
    assert done.exit_code == 0, done.output
    assert "async-computation: ok (4 experiment(s))" in done.output


def test_list_names_every_suite_with_what_it_runs():
    done = invoke("list")
    assert done.exit_code == 0, done.output
    assert "asyncbench run NAME" in done.output
    for name in suites.names():
        (line,) = [line for line in done.output.splitlines() if line.split()[:1] == [name]]
        assert len(line.split(maxsplit=1)) == 2, line  # a name and what it runs
    assert "async-computation" in suites.names()
    assert suites.summary("async-computation").startswith('"Asynchronous Computation" (d2l.ai)')


def test_configs_is_the_packaged_suites_not_a_copy():
    """Each file in configs/ is a link to the package's suite, and each suite but the built-in default has one: the
    clone's paths (tests, docs, benchmarks) and the wheel read one file, which cannot drift from itself."""
    linked = sorted((ROOT / "configs").glob("*.yaml"))
    assert len(linked) >= 8
    for path in linked:
        assert path.is_symlink(), f"{path} is a copy: move it to asyncbench/suites/ and link it"
        assert path.resolve() == (PACKAGED / path.name).resolve()
    assert {p.name for p in linked} == {p.name for p in PACKAGED.glob("*.yaml")} - {config.DEFAULT_SUITE}
