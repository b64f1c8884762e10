"""Files `record` reads and `report` shows, written by a careless or hostile hand: every field is held to its
vocabulary before anything is stored, every file is read before any is stored, a revision never reaches git as an
option, and the page quotes every attribute and lets only its own scripts run."""

from __future__ import annotations

import copy
import dataclasses
import html.parser
import json
import re
import subprocess
from pathlib import Path

import pytest

from asyncbench.history import recording, store, target
from asyncbench.history.model import LatestCase, LatestRun, RecentRun
from asyncbench.report import html as page
from asyncbench.results import ab_file, ab_report, paired
from asyncbench.results.labels import Label
from asyncbench.results.schema import Report
from tests.support.cli import invoke
from tests.support.helpers import quick_numpy_results


@pytest.fixture(scope="module")
def results_file(tmp_path_factory) -> Path:
    return quick_numpy_results(tmp_path_factory.mktemp("results") / "r.json")


def _ab(facts: dict) -> dict:
    """A real `ab` file's JSON (paired.dumps), one case with one paired ratio."""
    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11", facts=facts)
    ratio = paired.PairedRatio("matmul", paired.VARIANT, "s", 0.010, 0.013, 1.3, (1.22, 1.38), Label.SLOWER)
    case = paired.PairedCase("matmul[numpy,cpu]", "ok", ratios=(ratio,), rounds=40)
    report = ab_report.ABReport(
        "2026-11-23T12:00:00+00:00", "0.1.0", dataclasses.replace(side, name="base"), side, 0.05, 0.01, False, "SIGSTOP", (case,)
    )
    return json.loads(report.to_json())


@pytest.fixture(scope="module")
def ab_data(results_file) -> dict:
    return _ab(Report.load(results_file).environment)


def record(*args: str):
    """`asyncbench record` in this process: a traceback fails the test (catch_exceptions=False)."""
    return invoke("record", *args)


def runs_in(history: Path) -> int:
    if not history.exists():
        return 0
    return len(store.open_store(target.resolve(str(history))).recent(1000))


def _write(folder: Path, name: str, data: dict) -> Path:
    path = folder / name
    path.write_text(json.dumps(data))
    return path


def _refused(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0], lines[0]


# --- `ab` files -------------------------------------------------------------------------------------------------

MALFORMED_AB = {
    "cases not a list": (lambda d: d.update(cases={"id": "x"}), "cases"),
    "a case without an id": (lambda d: d["cases"][0].pop("id"), "cases[0].id"),
    "a ratio's interval a string": (lambda d: d["cases"][0]["ratios"][0].update(ratio_ci="1.2-1.4"), "cases[0].ratios[0].ratio_ci"),
    "a ratio that is text": (lambda d: d["cases"][0]["ratios"][0].update(ratio="fast"), "cases[0].ratios[0].ratio"),
    "a ratio without a name": (lambda d: d["cases"][0]["ratios"][0].pop("name"), "cases[0].ratios[0].name"),
    "head not an object": (lambda d: d.update(head="HEAD"), "head"),
    "no head": (lambda d: d.pop("head"), "head"),
    "no cases": (lambda d: d.pop("cases"), "cases"),
    "a hostile verdict": (lambda d: d["cases"][0]["ratios"][0].update(verdict="pass onmouseover=alert(1)"), "verdict"),
    "a hostile label": (lambda d: d["cases"][0]["ratios"][0].update(label="SAME<script>"), "label"),
    "an unknown status": (lambda d: d["cases"][0].update(status="ok onfocus=x"), "status"),
    "a revision that is an option": (lambda d: d["head"].update(revision="--output=/tmp/x (HEAD)"), "head.revision"),
    "an infinite interval": (lambda d: d["cases"][0]["ratios"][0].update(ratio_ci=[1.0, float("inf")]), "ratio_ci"),
    "a case id with a control character": (lambda d: d["cases"][0].update(id="matmul[numpy,cpu]\x1b[2J"), "cases[0].id"),
    "a case id a megabyte long": (lambda d: d["cases"][0].update(id="x" * 1_000_000), "cases[0].id"),
    "a ratio of zero": (lambda d: d["cases"][0]["ratios"][0].update(ratio=0), "cases[0].ratios[0].ratio"),
    "a negative margin": (lambda d: d.update(max_regression=-0.05), "max_regression"),
    "negative rounds": (lambda d: d["cases"][0].update(rounds=-1), "cases[0].rounds"),
    "a case's negative margin": (lambda d: d["cases"][0].update(margin=-0.2), "cases[0].margin"),
    "a block's value that is text": (lambda d: d["cases"][0]["ratios"][0].update(block_log_ratios=[0.01, "x"]), "block_log_ratios[1]"),
    "facts a string": (lambda d: d["head"].update(facts="numpy"), "head.facts"),
    "a creation time that is no time": (lambda d: d.update(created="yesterday"), "created"),
    "schema version 0": (lambda d: d.update(schema_version=0), "schema_version"),
}


@pytest.mark.parametrize("spoil", MALFORMED_AB, ids=list(MALFORMED_AB))
def test_a_malformed_ab_file_is_one_line_exit_2_naming_its_key_and_nothing_is_recorded(spoil, ab_data, tmp_path):
    data = copy.deepcopy(ab_data)
    change, key = MALFORMED_AB[spoil]
    change(data)
    bad = _write(tmp_path, "bad-ab.json", data)
    history = tmp_path / "h.sqlite"
    _refused(record(str(bad), "--history", str(history)), "bad-ab.json", key)
    assert runs_in(history) == 0


def test_every_file_is_read_before_any_is_recorded(results_file, ab_data, tmp_path):
    bad = copy.deepcopy(ab_data)
    bad["cases"][0]["ratios"][0]["ratio_ci"] = "wide"
    history = tmp_path / "h.sqlite"
    _refused(record(str(results_file), str(_write(tmp_path, "bad-ab.json", bad)), "--history", str(history)), "bad-ab.json")
    assert runs_in(history) == 0
    done = record(str(results_file), str(_write(tmp_path, "ab.json", ab_data)), "--history", str(history))
    assert done.exit_code == 0, done.output
    assert runs_in(history) == 2


def test_a_good_ab_file_reads_as_typed_frozen_records(ab_data):
    read = ab_file.from_dict(ab_data, "ab.json")
    assert read.revision == "a1b2c3d"
    [case] = read.cases
    assert (case.workload, case.backend, case.device, case.status) == ("matmul", "numpy", "cpu", "ok")
    assert case.ratios[0] == ab_file.Ratio("matmul", "variant", Label.SLOWER, 1.3, (1.22, 1.38))
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.status = "error"  # type: ignore[misc]


# --- plain results files ----------------------------------------------------------------------------------------


def _result_line(data: dict, **changes) -> dict:
    data = copy.deepcopy(data)
    data["results"][0].update(changes)
    return data


def _variant(data: dict, clock: str, **changes) -> dict:
    data = copy.deepcopy(data)
    variant = next(iter(data["results"][0]["variants"].values()))
    variant[clock].update(changes)
    return data


def _environment(data: dict, **changes) -> dict:
    data = copy.deepcopy(data)
    data["environment"].update(changes)
    return data


def _metric_unit(data: dict, unit: str) -> dict:
    data = copy.deepcopy(data)
    [workload] = data["metric_info"]
    for info in data["metric_info"][workload].values():
        info["unit"] = unit
    return data


MALFORMED_RESULTS = {
    "a git sha that is an option": (lambda d: _environment(d, git_sha="--output=/tmp/pwned"), "environment.git_sha"),
    "a git sha that is markup": (lambda d: _environment(d, git_sha="<img src=x onerror=alert(1)>"), "environment.git_sha"),
    "a median that is text": (lambda d: _variant(d, "done_s", median="fast"), "done_s.median"),
    "a median that is NaN": (lambda d: _variant(d, "done_s", median=float("nan")), "done_s.median"),
    "an interval bound that is infinite": (lambda d: _variant(d, "done_s", ci_high=float("inf")), "done_s.ci_high"),
    "a metric that is text": (lambda d: _result_line(d, metrics={"speedup": "lots"}), "metrics.speedup"),
    "a unit that is markup": (lambda d: _metric_unit(d, '"><script>alert(1)</script>'), "unit"),
    "a case id with a newline": (lambda d: _result_line(d, id="matmul\nrecorded as run 1"), "results[0].id"),
    "a host a megabyte long": (lambda d: _environment(d, hostname="h" * 1_000_000), "environment.hostname"),
    "frameworks a list": (lambda d: _environment(d, frameworks=["numpy"]), "environment.frameworks"),
    "params a list": (lambda d: _result_line(d, params=[1, 2]), "results[0].params"),
    "a reason that is a number": (lambda d: _result_line(d, reason=12), "results[0].reason"),
    "an empty case id": (lambda d: _result_line(d, id=""), "results[0].id"),
    "a device that is an option": (lambda d: _result_line(d, device="--output=/tmp/pwned"), "results[0].device"),
    "a negative median": (lambda d: _variant(d, "done_s", median=-1.0), "done_s.median"),
    "an interval upside down": (lambda d: _variant(d, "done_s", ci_low=1.0, ci_high=0.5), "done_s.ci_low"),
    "a sample count that is a fraction": (lambda d: _variant(d, "done_s", n=6.5), "done_s.n"),
    "a metric that is NaN": (lambda d: _result_line(d, metrics={"gflops": float("nan")}), "metrics.gflops"),
    "a check's bounds of one number": (lambda d: _result_line(d, checks=[{"expect": "x", "verdict": "pass", "bounds": [1.0]}]), "bounds"),
    "a creation time that is no time": (lambda d: {**d, "created": "yesterday"}, "created"),
    "interrupted a string": (lambda d: {**d, "interrupted": "no"}, "interrupted"),
    "schema version 0": (lambda d: {**d, "schema_version": 0}, "schema_version"),
    "a result that is a number": (lambda d: {**d, "results": [1]}, "results[0]"),
    "params nested a hundred deep": (lambda d: _result_line(d, params={"p": _deep(100)}), "results[0].params"),
}


def _deep(levels: int) -> list:
    nested: list = []
    for _ in range(levels):
        nested = [nested]
    return nested


def test_a_file_nested_deeper_than_json_can_read_is_one_line(results_file, tmp_path):
    bad = tmp_path / "deep.json"
    bad.write_text(results_file.read_text().replace('"params": {', '"params": {"deep": ' + "[" * 100_000 + "]" * 100_000 + ",", 1))
    history = tmp_path / "h.sqlite"
    _refused(record(str(bad), "--history", str(history)), "deep.json", "nested")
    assert runs_in(history) == 0


@pytest.mark.parametrize("label", ["v1\nasyncbench: recorded", "v1\x1b[2J", "x" * 10_000])
def test_a_label_that_is_not_one_bounded_line_is_refused(label, results_file, tmp_path):
    history = tmp_path / "h.sqlite"
    result = record(str(results_file), "--history", str(history), "--label", label)
    assert result.exit_code == 2
    assert "--label" in result.stderr
    assert runs_in(history) == 0


@pytest.mark.parametrize("spoil", MALFORMED_RESULTS, ids=list(MALFORMED_RESULTS))
def test_a_results_file_with_a_field_out_of_its_vocabulary_is_refused(spoil, results_file, tmp_path):
    change, key = MALFORMED_RESULTS[spoil]
    bad = _write(tmp_path, "bad.json", change(json.loads(results_file.read_text())))
    history = tmp_path / "h.sqlite"
    _refused(record(str(results_file), str(bad), "--history", str(history)), "bad.json", key)
    assert runs_in(history) == 0


# --- git ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def repository(tmp_path, monkeypatch) -> str:
    """A git repository with one commit, the current directory; its commit's sha."""
    run = lambda *args: subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True)  # noqa: E731
    run("init", "-q")
    (tmp_path / "f").write_text("x")
    run("add", "f")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    monkeypatch.chdir(tmp_path)
    return run("rev-parse", "HEAD").stdout.strip()


def test_a_revision_from_a_file_never_reaches_git_as_an_option(repository, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("kept")
    for hostile in (f"--output={victim}", f"--output={tmp_path / 'new.txt'}", "-o/tmp/x", f"{repository} --output={victim}"):
        assert recording.git_facts(hostile) == {}
    assert victim.read_text() == "kept"
    assert not (tmp_path / "new.txt").exists()


def test_a_hex_revision_still_finds_its_commit(repository):
    assert "commit_time" in recording.git_facts(repository)
    assert "commit_time" in recording.git_facts(repository[:7] + "-dirty")
    assert recording.git_facts("0" * 40) == {}


# --- the page -----------------------------------------------------------------------------------------------------

HOSTILE_VERDICT = "pass onmouseover=window.pwned=1"
Run = RecentRun


class _Attributes(html.parser.HTMLParser):
    """Every attribute of the page's markup (outside its scripts), as the browser's parser would read them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.found += [(tag, name, value) for name, value in attrs]


def _page(verdict: str) -> str:
    case = LatestCase("c", "m", "ok", None, ({"verdict": verdict, "expect": "x"},), {}, [("v", "done_s", "s", 1.0, 0.9, 1.1)])
    latest = LatestRun(1, "2026-11-01T00:00:00", "l", "a1b2c3d", None, "h", (case,))
    return page.render([], latest, [Run(1, "2026-11-01T00:00:00", "<b>", "a1b2c3d", None, "h", "0.1")], "store")


def test_a_verdict_that_is_an_attribute_stays_text(tmp_path):
    parser = _Attributes()
    parser.feed(_page(HOSTILE_VERDICT))
    assert {name for _, name, _ in parser.found} <= {"lang", "charset", "http-equiv", "content", "class", "id", "type", "colspan", "href"}
    assert ("span", "class", "") in parser.found
    parser = _Attributes()
    parser.feed(_page("fail"))
    assert ("span", "class", "fail") in parser.found


def test_every_attribute_of_the_page_is_quoted():
    text = _page("pass")
    body = text.split("</script></head>", 1)[1].split('<script type="application/json"', 1)[0]
    assert re.findall(r"<[a-z0-9]+(?:\s+[a-z-]+=\"[^\"]*\")*\s+[a-z-]+=[^\"\s>]", body) == []


def test_the_policy_lets_run_only_the_pages_own_scripts():
    text = _page("pass")
    policy = html.unescape(text.split('http-equiv="Content-Security-Policy" content="', 1)[1].split('"', 1)[0])
    scripts = policy.split("script-src", 1)[1].split(";", 1)[0].split()
    assert "'unsafe-inline'" not in scripts
    assert "'unsafe-eval'" not in scripts
    inline = [part.split(">", 1)[1].split("</script>", 1)[0] for part in text.split("<script")[1:] if not part.startswith(" type=")]
    assert len(inline) == 2  # Plotly and the page's drawing
    assert sorted(scripts) == sorted(page.csp(*inline).split("script-src ", 1)[1].split(";", 1)[0].split())
