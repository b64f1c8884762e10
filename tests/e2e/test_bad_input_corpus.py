"""Every file of tests/spec/corpus and every bad command line below, through the CLI: exit 2, one clear line, no traceback.

tests/spec/corpus/expected.json maps each file to a fragment its message must contain, or, for a
config with several mistakes, to a list of fragments: every mistake is said at once, one line
each, in file order. Configs are run (`run FILE`) and validated, results files shown and compared.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import invoke

#: the files, beside the spec's own tests (tests/spec), whose readers they test
CORPUS = Path(__file__).parents[1] / "spec" / "corpus"
EXPECTED: dict[str, str | list[str]] = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))


def run_cli(*args: str):
    result = invoke(*args, catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def assert_clear_error(result, fragment: str | list[str]) -> None:
    """Exit 2 and the reason on one line, "asyncbench: error: ...", ours and click's usage errors alike. A list of
    fragments: one line per mistake, each containing its fragment, in that order."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    fragments = [fragment] if isinstance(fragment, str) else fragment
    assert len(lines) == len(fragments), result.output
    for line, expected in zip(lines, fragments, strict=True):
        assert line.startswith("asyncbench: error: "), result.output
        assert expected in line, result.output


def test_the_corpus_is_large_and_every_file_is_listed():
    files = {str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/*") if p.is_file()}
    assert files == set(EXPECTED)
    assert len(files) >= 40


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.startswith("configs/")))
def test_bad_config_is_refused_before_running(name):
    path = str(CORPUS / name)
    assert_clear_error(run_cli("run", path, "--no-progress"), EXPECTED[name])
    assert_clear_error(run_cli("validate", path), EXPECTED[name])


def test_several_configs_each_say_every_mistake():
    """`validate` and `run` with several configs: each file's mistakes, file after file, each in line order."""
    names = ["configs/three-mistakes.yaml", "configs/unknown-param.yaml", "configs/yaml-mistakes.yaml"]
    fragments = [f for name in names for f in ([EXPECTED[name]] if isinstance(EXPECTED[name], str) else EXPECTED[name])]
    paths = [str(CORPUS / name) for name in names]
    assert_clear_error(run_cli("validate", *paths), fragments)
    assert_clear_error(run_cli("run", *paths, "--no-progress"), fragments)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.startswith("results/")))
def test_unusable_results_file_is_refused(name):
    path = str(CORPUS / name)
    assert_clear_error(run_cli("show", path), EXPECTED[name])
    assert_clear_error(run_cli("compare", path, path), EXPECTED[name])


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["run", "no/such/config.yaml"], "no such file"),
        (["run", "."], "is a directory"),
        (["run", "-w", "matmull"], "did you mean 'matmul'"),
        (["run", "-b", "pytorch"], "unknown backend"),
        (["run", "-d", "gpu0"], "malformed device"),
        (["run", "-w", "matmul", "--set", "size"], "KEY=VALUE"),
        (["run", "-w", "matmul", "--set", "sise=3"], "did you mean 'size'"),
        (["run", "-w", "matmul", "--set", "size=-3"], "at least 1"),
        (["run", "-w", "matmul", "--set", "min_samples=9", "--set", "max_samples=2"], "below min_samples"),
        (["run", "-w", "matmul", "-o", "no/such/dir/r.json"], "does not exist"),
        (["run", "-w", "matmul", "-o", "."], "is a directory"),
        (["run", "-w", "matmul", "--max-regression", "-3%"], "--max-regression"),
        (["run", "-w", "matmul", "--plot", "p.png"], "no selected experiment has one"),
        (["compare", "no/such/a.json", "no/such/b.json"], "no such file"),
        (["show", "no/such.json"], "no such file"),
    ],
)
def test_bad_command_line_is_one_clear_line(args, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_clear_error(run_cli(*args), fragment)


def test_a_calm_wait_in_the_environment_that_is_not_seconds_is_one_line_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ("run", "-w", "matmul", "-b", "numpy", "--quick", "-o", "out.json")
    result = invoke(*args, env={"ASYNCBENCH_CALM_WAIT_S": "soon"}, catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert_clear_error(result, "ASYNCBENCH_CALM_WAIT_S='soon': expected seconds")
    assert not (tmp_path / "out.json").exists()
