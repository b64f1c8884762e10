"""`run --junit --bmf`: a real run writes both beside its results file, and `show --format` gives the same again."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from click.testing import CliRunner

from asyncbench import cli
from asyncbench.errors import EXIT_GATE

CONFIG = """\
name: outputs
defaults: {backends: [numpy], devices: [cpu], max_time_s: 0.5}
experiments:
  - name: gate
    workload: matmul
    params: {size: 64, n_iter: 2}
    expect:
      - illusion <= 100            # a CPU's loop returns with its work done: passes
      - done_s.median < 1ns        # no product takes under a nanosecond: fails
"""


def test_run_writes_junit_and_bmf_and_show_writes_them_again(tmp_path):
    config = tmp_path / "gate.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    results, junit, bmf = tmp_path / "r.json", tmp_path / "junit.xml", tmp_path / "bmf.json"
    # not --quick: its sizes replace the config's (a 256² product, ten times the time on a loaded runner)
    args = ["run", str(config), "--in-process", "--no-progress", "-o", str(results), "--junit", str(junit), "--bmf", str(bmf)]
    ran = CliRunner().invoke(cli.main, args, catch_exceptions=False)
    assert ran.exit_code == EXIT_GATE, ran.output  # the failing check fails the gate
    stored = json.loads(results.read_text(encoding="utf-8"))["results"][0]
    not_passed = sum(check["verdict"] != "pass" for check in stored["checks"])  # 1, or 2 on a runner so noisy that the
    root = ET.parse(junit).getroot()  # rounds drifted together and left the first check without an interval
    assert [root.get(key) for key in ("tests", "failures", "errors", "skipped")] == ["2", str(not_passed), "0", "0"]
    tests = {test.get("name"): test for test in root.iter("testcase")}
    assert tests["done_s.median < 1ns"].find("failure") is not None
    assert tests["done_s.median < 1ns"].get("classname") == stored["id"]
    done = stored["variants"]["matmul"]["done_s"]
    measures = json.loads(bmf.read_text(encoding="utf-8"))[f"{stored['id']} matmul"]
    assert measures["done_s"] == {"value": done["median"], "lower_value": done["ci_low"], "upper_value": done["ci_high"]}
    for fmt, written in (("junit", junit), ("bmf", bmf)):
        shown = CliRunner().invoke(cli.main, ["show", str(results), "--format", fmt], catch_exceptions=False)
        assert shown.exit_code == 0
        assert shown.output == written.read_text(encoding="utf-8")  # judged alike: the gate's default is show's
