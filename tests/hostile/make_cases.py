"""Writes the hostile files of tests/hostile/cases/ from the good files in cases/good/.

    python -m tests.hostile.make_cases

The files are kept in the repository (a reviewer reads them, the test only reads them); this script is how
each was made: one small change to a real, valid file, so each file is bad in exactly one way.
cases/good/results.json is a real `asyncbench run -w matmul -b numpy --quick` results file with one check
added; cases/good/census-raw.json and cases/good/step-raw.json real files with a census, and with a step
form's metrics and a verified bound; cases/good/ab.json a real `ab` file (results.ab_report.ABReport.to_json). What
each must make the tool say is in tests/hostile/expected.yaml.
"""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path
from typing import Any, Callable

CASES = Path(__file__).parent / "cases"
GOOD = CASES / "good"

#: a path outside the case's folder that no case may create (tests/e2e/test_hostile_corpus.py checks it)
PWNED = "/tmp/asyncbench-hostile-pwned"
LONG = "x" * 100_000
DEEP = 50_000
#: placeholders replaced in the JSON text after dumping (what json.dumps cannot write)
HUGE_FLOAT, DEEP_LIST = "__HUGE_FLOAT__", "__DEEP_LIST__"


def _results() -> dict[str, Any]:
    raw = json.loads((GOOD / "results-raw.json").read_text(encoding="utf-8"))
    raw["created"] = "2026-11-23T12:00:00+00:00"
    raw["environment"]["hostname"] = "ci-runner-1"
    raw["environment"]["git_sha"] = "0123456789abcdef0123456789abcdef01234567"
    [result] = raw["results"]
    result["checks"] = [
        {
            "expect": "done_s.median < 10ms",
            "verdict": "pass",
            "value": result["metrics"]["done_s"],
            "detail": "2.13 ms [2.09-2.14] < 10 ms",
            "bounds": list(result["bounds"]["done_s"]),
            "confidence": 0.999,
            "family_error": 0.01,
        }
    ]
    return raw


def _write(path: Path, data: Any, compact_results: bool = False) -> None:
    text = json.dumps(data, indent=1, ensure_ascii=False)
    text = text.replace(f'"{HUGE_FLOAT}"', "1e400").replace(f'"{DEEP_LIST}"', "[" * DEEP + "]" * DEEP)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change: the value at a dotted path (list indexes as numbers) set; `...DELETE` removes the key."""

    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        key: Any = int(last) if isinstance(node, list) else last
        if value is DELETE:
            del node[key]
        else:
            node[key] = value

    return change


DELETE = object()


def _both(*changes: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    """Several changes made as one (a file bad in one way that takes two keys to say: a label and its verdict)."""

    def change(data: dict[str, Any]) -> None:
        for one in changes:
            one(data)

    return change


def _renamed(path: str, old: str, new: str) -> Callable[[dict[str, Any]], None]:
    """A change: the key `old` of the object at a dotted path renamed `new`, its value and place kept."""

    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for part in path.split("."):
            node = node[int(part)] if isinstance(node, list) else node[part]
        renamed = {new if key == old else key: value for key, value in node.items()}
        node.clear()
        node.update(renamed)

    return change


def _times_scaled(factor: float) -> Callable[[dict[str, Any]], None]:
    """A change: every time of the first result (samples, clocks' summaries, metrics in seconds and their
    intervals, the case's and the sampling's times) multiplied by `factor`, each consistent with the others."""

    def change(data: dict[str, Any]) -> None:
        result = data["results"][0]
        for variant in result["variants"].values():
            for clock, values in variant["samples"].items():
                if values is not None:
                    variant["samples"][clock] = [value * factor for value in values]
                    variant[clock] = {key: v * factor if key != "n" and v is not None else v for key, v in variant[clock].items()}
        for name in [name for name in result["metrics"] if name.endswith("_s")]:
            result["metrics"][name] *= factor
            result["bounds"][name] = [bound * factor for bound in result["bounds"][name]]
        result["case_s"] *= factor
        result["sampling"]["elapsed_s"] *= factor

    return change


R0 = "results.0"
C0 = f"{R0}.checks.0"
MEDIAN = f"{R0}.variants.matmul.done_s"

#: a well-formed `shard` (schema 8: results.model.ShardOf) for the shard cases to change: shard 2 of 4 of a plan of 4
SHARD_CASE = {"id": "matmul[numpy,cpu]", "experiment": "matmul", "workload": "matmul", "backend": "numpy", "device": "cpu", "params": {}}
SHARD = {"index": 2, "count": 4, "plan": "ab" * 32, "plan_cases": 4, "cases": [SHARD_CASE], "positions": [1]}

#: results files: name -> change to the good file
RESULTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "schema-version-99": _set("schema_version", 99),
    "schema-version-0": _set("schema_version", 0),
    "schema-version-negative": _set("schema_version", -1),
    "schema-version-float": _set("schema_version", 4.5),
    "schema-version-string": _set("schema_version", "5"),
    "schema-version-bool": _set("schema_version", True),
    "schema-version-huge": _set("schema_version", 10**40),
    "no-schema-version": _set("schema_version", DELETE),
    "no-results": _set("results", DELETE),
    "results-object": _set("results", {"matmul": {}}),
    "results-null": _set("results", None),
    "result-number": _set("results", [1]),
    "no-tool": _set("tool", DELETE),
    "tool-foreign": _set("tool.name", "pytest-benchmark"),
    "environment-list": _set("environment", ["AMD EPYC"]),
    "result-no-id": _set(f"{R0}.id", DELETE),
    "id-number": _set(f"{R0}.id", 12),
    "id-empty": _set(f"{R0}.id", ""),
    "id-control-chars": _set(f"{R0}.id", "matmul[numpy,cpu]\x1b[2J\x1b[31mFAKE ok\r"),
    "id-newline": _set(f"{R0}.id", "matmul[numpy,cpu]\nasyncbench: all good"),
    "id-very-long": _set(f"{R0}.id", LONG),
    "id-twice": lambda data: data["results"].append(copy.deepcopy(data["results"][0])),
    "config-name-control": _set("config.name", "suite\x1b]0;pwned\x07"),
    "param-value-control": _set(f"{R0}.params.dtype", "float32\x1b[2J"),
    "status-unknown": _set(f"{R0}.status", "passed"),
    "status-option": _set(f"{R0}.status", f"--output={PWNED}"),
    "status-html": _set(f"{R0}.status", "pass onmouseover=alert(1)"),
    "status-script": _set(f"{R0}.status", "</script><script>alert(1)</script>"),
    "status-number": _set(f"{R0}.status", 0),
    "status-null": _set(f"{R0}.status", None),
    "verdict-unknown": _set(f"{C0}.verdict", "ok"),
    "verdict-html": _set(f"{C0}.verdict", "pass onmouseover=alert(1)"),
    "verdict-option": _set(f"{C0}.verdict", f"--output={PWNED}"),
    "verdict-script": _set(f"{C0}.verdict", "</script><script>alert(1)</script>"),
    "verdict-control": _set(f"{C0}.verdict", "pass\x1b[8m"),
    "verdict-list": _set(f"{C0}.verdict", ["pass"]),
    "checks-object": _set(f"{R0}.checks", {"expect": "x"}),
    # a check whose text does not parse, its "pass" kept: `show` printed it as passed (✓, exit 0), judged of nothing
    "check-expect-not-a-check": _set(f"{C0}.expect", "done_s.median < 10ms --strict; rm -rf /"),
    "check-value-nan": _set(f"{C0}.value", float("nan")),
    "check-value-inf": _set(f"{C0}.value", float("inf")),
    "check-value-string": _set(f"{C0}.value", "fast"),
    "check-bounds-short": _set(f"{C0}.bounds", [0.002]),
    # a verdict its own interval (2.09-2.14 ms) does not give against its threshold (< 10 ms: pass), or its one measurement
    "check-verdict-not-its-interval": _set(f"{C0}.verdict", "fail"),
    "check-verdict-not-its-measurement": _both(
        _set(f"{C0}.expect", "done_s.min < 10ms"), _set(f"{C0}.bounds", DELETE), _set(f"{C0}.verdict", "fail")
    ),
    # a forged check: another value and interval than the case's own, its verdict theirs (a new user's edit)
    "check-value-not-the-cases": _both(_set(f"{C0}.value", 0.005), _set(f"{C0}.bounds", [0.004, 0.006])),
    # its own value, with an interval narrower than the case's 95% one of the same median (at 99.9%)
    "check-interval-narrower-than-its-own": _set(f"{C0}.bounds", [0.00213, 0.0021302]),
    "check-confidence-half": _set(f"{C0}.confidence", 0.5),
    "check-detail-level-not-its-confidence": _set(
        f"{C0}.detail", "done_s.median[matmul] = 2.13 ms [2.09–2.14] (99.99% interval), expected < 10.0 ms"
    ),
    # identity fields the id contradicts, an error that does not say why, keys no schema writes
    "backend-not-its-id": _set(f"{R0}.backend", "torch"),
    "param-not-its-id": _set(f"{R0}.params.size", 4096),
    # ids that name another case than their fields (whose numbers would join that case's history series)
    "id-not-its-experiment": _set(f"{R0}.id", "other[numpy,cpu,size=256,n_iter=3]"),
    "id-param-not-its-params": _set(f"{R0}.id", "matmul[numpy,cpu,size=256,n_iter=3,n_ops=1000]"),
    "id-not-a-case-id": _set(f"{R0}.id", "x"),
    # a second bracket: its backend read as "" (`names backend ''`), where the id as a whole is what is wrong
    "id-two-brackets": _set(f"{R0}.id", "matmul[numpy,cpu,size=256,n_iter=3][x"),
    # a metric matmul never writes: `show` printed it, `record` stored it, the report charted it
    "metric-unknown": _both(_set(f"{R0}.metrics.bogus", 1.0), _set(f"{R0}.bounds.bogus", [0.5, 1.5])),
    # a trace no `--trace` writes: a path out of the trace folder, and one without what the traces hold
    "trace-path-outside": _both(_set(f"{R0}.traces", {"matmul": "../../../etc/passwd"}), _set(f"{R0}.trace_detail", "harness ranges only")),
    "trace-without-detail": _set(f"{R0}.traces", {"matmul": "/tmp/traces/matmul[numpy,cpu,size=256,n_iter=3].matmul.trace.json"}),
    "error-without-reason": _set(f"{R0}.status", "error"),
    "case-key-unknown": _set(f"{R0}.verified_by", "me"),
    "top-key-unknown": _set("signed", True),
    # a median's pass with no interval: a median is judged from its interval (without one it is INCONCLUSIVE)
    "check-pass-without-its-interval": _set(f"{C0}.bounds", DELETE),
    # a check's text with another threshold than the one its detail says it was judged against (10 ms)
    "check-expect-not-its-threshold": _both(
        _set(f"{C0}.detail", "done_s.median[matmul] = 2.13 ms [2.09–2.14] (99.9% interval), expected < 10.0 ms"),
        _set(f"{C0}.expect", "done_s.median < 1s"),
    ),
    "median-nan": _set(f"{MEDIAN}.median", float("nan")),
    "median-inf": _set(f"{MEDIAN}.median", float("inf")),
    "median-negative": _set(f"{MEDIAN}.median", -0.002),
    "median-huge": _set(f"{MEDIAN}.median", HUGE_FLOAT),
    "median-string": _set(f"{MEDIAN}.median", "2 ms"),
    "median-bool": _set(f"{MEDIAN}.median", True),
    "n-negative": _set(f"{MEDIAN}.n", -6),
    "n-huge": _set(f"{MEDIAN}.n", 10**40),
    "n-float": _set(f"{MEDIAN}.n", 6.5),
    "ci-reversed": _set(f"{MEDIAN}.ci_low", 1.0),
    "median-beyond-extremes": _set(f"{MEDIAN}.median", 1e9),
    "median-outside-its-interval": _set(f"{MEDIAN}.ci_high", 0.00212),
    "samples-not-the-summary": lambda data: data["results"][0]["variants"]["matmul"]["samples"].update(
        done_s=[value * 1000 for value in data["results"][0]["variants"]["matmul"]["samples"]["done_s"]]
    ),
    "n-not-the-samples": _set(f"{MEDIAN}.n", 7),
    # a variant's samples dropped under its summary: `compare` and `--baseline` left the variant out without a word
    # (exit 0, "2 SAME") while `show` and `history` showed it 3x slower
    "samples-emptied": lambda data: data["results"][0]["variants"]["matmul"]["samples"].update(issue_s=[], done_s=[]),
    # an interval narrowed onto its median beside samples that spread: `show` printed "±0%"
    "interval-not-its-samples": lambda data: data["results"][0]["variants"]["matmul"]["done_s"].update(
        ci_low=data["results"][0]["variants"]["matmul"]["done_s"]["median"],
        ci_high=data["results"][0]["variants"]["matmul"]["done_s"]["median"],
    ),
    "metric-outside-its-interval": _set(f"{R0}.metrics.gflops", -3.0),
    # a figure moved with its interval beside samples that give another: `show` printed 5.00× and "nothing runs ahead"
    "illusion-not-its-samples": _both(_set(f"{R0}.metrics.illusion", 5.0), _set(f"{R0}.bounds.illusion", [4.0, 6.0])),
    "gflops-not-its-samples": _both(_set(f"{R0}.metrics.gflops", 45.0), _set(f"{R0}.bounds.gflops", [44.9, 45.1])),
    "gflops-interval-not-its-samples": _set(f"{R0}.bounds.gflops", [47.2, 47.3]),
    # the variant's clock restated as a metric, edited: `show` printed "done 2.09 ms" under the table's 2.13 ms
    "done-not-its-samples": _set(f"{R0}.metrics.done_s", 0.00209),
    "done-huge-with-its-interval": _both(_set(f"{R0}.metrics.done_s", 1e300), _set(f"{R0}.bounds.done_s", [1e299, 1e301])),
    "done-interval-not-its-samples": _set(f"{R0}.bounds.done_s", [0.00213, 0.002131]),
    "issue-not-its-samples": _set(f"{R0}.metrics.issue_s", 0.0021),
    # JSON's true where a number goes (Python's bool is an int): `show` printed "gflops 1 GFLOP/s [47.1–48.2]"
    "metric-bool": _set(f"{R0}.metrics.gflops", True),
    "metric-bool-done": _set(f"{R0}.metrics.done_s", True),
    "check-value-bool": _set(f"{C0}.value", True),
    "sample-negative": _set(f"{R0}.variants.matmul.samples.done_s", [-1.0] * 6),
    "sample-nan": _set(f"{R0}.variants.matmul.samples.done_s", [float("nan")] * 6),
    "metric-nan": _set(f"{R0}.metrics.gflops", float("nan")),
    "metric-inf": _set(f"{R0}.metrics.gflops", float("-inf")),
    "bound-huge": _set(f"{R0}.bounds.gflops", [47.0, HUGE_FLOAT]),
    "variants-list": _set(f"{R0}.variants", [1, 2]),
    "params-list": _set(f"{R0}.params", ["size", 256]),
    "backend-control": _set(f"{R0}.backend", "numpy\x07\x1b]0;pwned\x07"),
    "device-option": _set(f"{R0}.device", f"--output={PWNED}"),
    "machine-control": _set(f"{R0}.machine", "node-1\x1b[2K\rnode-2"),
    "machine-very-long": _set(f"{R0}.machine", LONG),
    "machine-number": _set(f"{R0}.machine", 42),
    "hostname-control": _set("environment.hostname", "vm\x1b[31m\nasyncbench: recorded"),
    "hostname-very-long": _set("environment.hostname", LONG),
    "cpu-control": _set("environment.cpu", "AMD EPYC\x00\x1b[2J"),
    "git-sha-option": _set("environment.git_sha", f"--output={PWNED}"),
    "git-sha-script": _set("environment.git_sha", "</script><script>alert(1)</script>"),
    "git-sha-control": _set("environment.git_sha", "0123456\x1b[2J"),
    "git-sha-number": _set("environment.git_sha", 123456789),
    "created-garbage": _set("created", "yesterday"),
    "created-number": _set("created", 1700000000),
    "interrupted-string": _set("interrupted", "no"),
    "deep-nesting": _set("environment.frameworks.numpy.extra", DEEP_LIST),
    "deep-nesting-params": _set(f"{R0}.params.size", DEEP_LIST),
    "shard-index-zero": _set("shard", {**SHARD, "index": 0}),
    "shard-index-above-count": _set("shard", {**SHARD, "index": 5, "count": 4}),
    "shard-count-huge": _set("shard", {**SHARD, "index": 1, "count": 10**6}),
    "shard-plan-control": _set("shard", {**SHARD, "plan": "ab\x1b[2J"}),
    "shard-plan-option": _set("shard", {**SHARD, "plan": f"--output={PWNED}"}),
    "shard-string": _set("shard", "2/4"),
    "shard-case-id-newline": _set("shard", {**SHARD, "cases": [{**SHARD_CASE, "id": "matmul[numpy,cpu]\nasyncbench: all good"}]}),
    "shard-position-beyond-plan": _set("shard", {**SHARD, "positions": [4]}),
    "shard-good": _set("shard", SHARD),  # a well-formed shard: `merge` refuses it alone (3 of 4 shards missing)
    # every time ×1e198, each consistent with the others: `show` printed a 200-digit table, compare a +1000000…% shift
    "times-scaled-1e198": _times_scaled(1e198),
    # a memory figure no machine holds (1e30 bytes: past a 64-bit address space)
    "memory-bytes-1e30": _set("results.0.variants.matmul.memory.host_rss_bytes", 1e30),
    # a clock renamed: read as a missing summary ("done_s: expected an object, got null"), not as the key it is
    "variant-clock-renamed": _renamed("results.0.variants.matmul", "done_s", "done_ms"),
    # a case's sampling with figures no run writes: `show` printed a ±1e+300% noise, a 1e+300 target, an
    # autocorrelation (a share of pairs, within ±1) of 1.5, and exited 0
    "sampling-rel-noise-1e300": _set(f"{R0}.sampling.rel_noise", 1e300),
    "sampling-rel-noise-negative": _set(f"{R0}.sampling.rel_noise", -0.5),
    "sampling-max-rel-noise-1e300": _set(f"{R0}.sampling.max_rel_noise", 1e300),
    "sampling-max-rel-noise-zero": _set(f"{R0}.sampling.max_rel_noise", 0),
    "sampling-max-time-zero": _set(f"{R0}.sampling.max_time_s", 0),
    # a null time limit or elapsed time: `show` ended in a traceback (TypeError), exit 1
    "sampling-max-time-null": _set(f"{R0}.sampling.max_time_s", None),
    "sampling-elapsed-null": _set(f"{R0}.sampling.elapsed_s", None),
    "sampling-max-time-1e300-stopped-by-it": _both(
        _set(f"{R0}.sampling.max_time_s", 1e300), _set(f"{R0}.sampling.stopped_by", "max_time_s")
    ),
    "sampling-max-time-1e9-stopped-by-it": _both(_set(f"{R0}.sampling.max_time_s", 1e9), _set(f"{R0}.sampling.stopped_by", "max_time_s")),
    "sampling-autocorrelation-1e300": _set(f"{R0}.sampling.lag1_autocorrelation", 1e300),
    "sampling-autocorrelation-below-minus-one": _set(f"{R0}.sampling.lag1_autocorrelation", -1.5),
}

A0 = "cases.0"
#: a note `ab` writes of a case's time (engine.gate_time), naming the good file's case
AB_WAITED_NOTE = (
    "matmul[numpy,cpu]: decided, but only at its one look, when the time ran out (block 3): 2 s was planned as 3 blocks at "
    "the gate's pace, too few for a look before the last; no cap would stop it sooner: a look before the last comes at "
    "block 10 at the earliest"
)
RATIO = f"{A0}.ratios.0"
#: the good ab file's case as schema 4 writes it (what it ran stated beside its id), for the cases that change that
AB_CASE = {
    "id": "matmul[numpy,cpu]",
    "status": "ok",
    "workload": "matmul",
    "backend": "numpy",
    "device": "cpu",
    "params": {"size": 64},
    "ratios": [
        {"name": "matmul", "kind": "variant", "unit": "s", "base": 0.01, "head": 0.013, "ratio": 1.3, "ratio_ci": [1.22, 1.38]}
        | {"label": "SLOWER", "verdict": "fail"}
    ],
}
#: ab files: name -> change to the good ab file
AB: dict[str, Callable[[dict[str, Any]], None]] = {
    "ab-schema-version-99": _set("schema_version", 99),
    "ab-schema-version-string": _set("schema_version", "1"),
    "ab-no-cases": _set("cases", DELETE),
    "ab-cases-object": _set("cases", {"matmul": 1}),
    "ab-case-number": _set("cases", [7]),
    "ab-no-head": _set("head", DELETE),
    "ab-head-list": _set("head", ["head"]),
    "ab-ratio-nan": _set(f"{RATIO}.ratio", float("nan")),
    "ab-ratio-inf": _set(f"{RATIO}.ratio", float("inf")),
    "ab-ratio-negative": _set(f"{RATIO}.ratio", -1.3),
    "ab-ratio-zero": _set(f"{RATIO}.ratio", 0),
    "ab-ratio-huge": _set(f"{RATIO}.ratio", HUGE_FLOAT),
    "ab-ratio-string": _set(f"{RATIO}.ratio", "1.3x"),
    "ab-ratio-ci-reversed": _set(f"{RATIO}.ratio_ci", [1.38, 1.22]),
    "ab-ratio-ci-short": _set(f"{RATIO}.ratio_ci", [1.22]),
    "ab-verdict-html": _set(f"{RATIO}.verdict", "pass onmouseover=alert(1)"),
    "ab-verdict-option": _set(f"{RATIO}.verdict", f"--output={PWNED}"),
    "ab-label-script": _set(f"{RATIO}.label", "</script><script>alert(1)</script>"),
    "ab-label-unknown": _set(f"{RATIO}.label", "MUCH SLOWER"),
    "ab-status-unknown": _set(f"{A0}.status", "fine"),
    # a key no `ab` schema writes, at each level: `show` printed the file and `record` stored it
    "ab-top-unknown-key": _set("extra", 1),
    "ab-base-unknown-key": _set("base.zzz", 1),
    "ab-case-unknown-key": _set(f"{A0}.evil_key", "<b>x</b>"),
    "ab-ratio-unknown-key": _set(f"{RATIO}.evil_key", "<b>x</b>"),
    "ab-id-control": _set(f"{A0}.id", "matmul[numpy,cpu]\x1b[2J"),
    "ab-id-very-long": _set(f"{A0}.id", LONG),
    # a trial's: recorded, it left a series with no case id, and every later `history` or `report` of the store
    # refused it as damaged
    "ab-id-empty": _set(f"{A0}.id", ""),
    # a trial's: ids that name no case of the workload, backend and device the case states (schema 4 on) were recorded
    # and gated as those cases
    "ab-id-blank": _both(
        _set(f"{A0}.id", "   "), _set(f"{A0}.workload", "matmul"), _set(f"{A0}.backend", "numpy"), _set(f"{A0}.device", "cpu")
    ),
    "ab-id-other-case": _both(
        _set(f"{A0}.id", "totally-other[jax,cuda]"),
        _set(f"{A0}.workload", "matmul"),
        _set(f"{A0}.backend", "numpy"),
        _set(f"{A0}.device", "cpu"),
    ),
    "ab-rounds-negative": _set(f"{A0}.rounds", -40),
    "ab-rounds-1e15": _set(f"{A0}.rounds", 10**15),
    "ab-needed-1e300": _set(f"{A0}.needed_s", 1e300),
    "ab-max-regression-negative": _set("max_regression", -0.05),
    "ab-max-regression-nan": _set("max_regression", float("nan")),
    "ab-git-sha-option": _set("head.facts.git_sha", f"--output={PWNED}"),
    "ab-hostname-control": _set("head.facts.hostname", "vm\x1b[31m\r"),
    "ab-facts-string": _set("head.facts", "AMD EPYC"),
    "ab-deep-nesting": _set("head.facts.frameworks.numpy.extra", DEEP_LIST),
    "ab-verdict-not-its-label": _set(f"{RATIO}.verdict", "pass"),
    "ab-params-list": _set(f"{A0}.params", ["size", 64]),
    "ab-param-name-control": _set(f"{A0}.params", {"size\x1b[2J": 64}),
    "ab-backend-option": _set(A0, {**AB_CASE, "backend": f"--output={PWNED}"}),
    # the label a margin rule does not give its interval: [1.22, 1.38] at 5% is SLOWER, said SAME (and pass)
    "ab-label-not-its-interval": _both(_set(f"{RATIO}.label", "SAME"), _set(f"{RATIO}.verdict", "pass")),
    # blocks that give another ratio than the one stated (50.0 each beside a ratio of 1.3)
    "ab-ratio-not-its-blocks": _both(_set(f"{RATIO}.block_log_ratios", [50.0] * 10), _set(f"{A0}.blocks", 10), _set(f"{A0}.rounds", 50)),
    # blocks that give the ratio stated (ln 1.3 each) but, at the case's confidence, not its interval
    "ab-interval-not-its-blocks": _both(
        _set(f"{RATIO}.block_log_ratios", [math.log(1.3)] * 10),
        _set(f"{A0}.blocks", 10),
        _set(f"{A0}.rounds", 50),
        _set(f"{A0}.confidence", 0.996),
    ),
    # a case that says it ran 3 blocks beside the 10 its ratio keeps
    "ab-blocks-not-its-ratios": _both(_set(f"{RATIO}.block_log_ratios", [math.log(1.3)] * 10), _set(f"{A0}.blocks", 3)),
    # more blocks than `ab` takes of a case (results.paired_held.MAX_FILE_BLOCKS), each the ratio stated and counted: 2000
    # crashed every reader (float(2**2000) in the sign test's error), 500 took 23 s to refuse, 20,000 minutes
    "ab-blocks-2000": _both(
        _set(f"{RATIO}.block_log_ratios", [math.log(1.3)] * 2000), _set(f"{A0}.blocks", 2000), _set(f"{A0}.confidence", 0.98)
    ),
    "ab-blocks-101": _both(_set(f"{RATIO}.block_log_ratios", [math.log(1.3)] * 101), _set(f"{A0}.blocks", 101)),
    "ab-block-ratios-500-uncounted": _both(_set(f"{RATIO}.block_log_ratios", [math.log(1.3)] * 500), _set(f"{A0}.blocks", DELETE)),
    # a median of 0 (a CI engineer's edit: shown as `0 ns` beside SAME, where 0.02 and 1e-9 were refused)
    "ab-head-zero": _set(f"{RATIO}.head", 0),
    "ab-base-and-head-zero": _both(_set(f"{RATIO}.base", 0), _set(f"{RATIO}.head", 0)),
    # an interval's level outside (0, 1)
    "ab-confidence-negative": _set(f"{A0}.confidence", -1),
    "ab-confidence-two": _set(f"{A0}.confidence", 2),
    # a unit `ab` never writes: a variant's medians are in seconds ("ms" read them a thousand times off)
    "ab-unit-parsecs": _set(f"{RATIO}.unit", "parsecs"),
    "ab-unit-ms": _set(f"{RATIO}.unit", "ms"),
    # a margin outside what --max-regression and ab_margin take (above 0%, under 1000%): 50 was shown as 5e+03%
    "ab-max-regression-50": _set("max_regression", 50),
    "ab-case-margin-50": _set(f"{A0}.margin", 50),
    # words the tool shows as its own, edited to a verdict: a gate-time note, a verification problem naming no side,
    # a Python version (a head median apart from its blocks is no longer one: `ab` never bounded the medians by them)
    "ab-time-note-verdict": _set("time_notes", ["✅ no slowdown beyond the margin: the gate passes"]),
    "ab-problem-no-side": _set(f"{A0}.problems", ["✅ all results verified"]),
    "ab-python-version-verdict": _set("head.python_version", "✅ the gate passes"),
    # a case's row copied (shown twice, two points of one run recorded), a ratio of no variant of its built-in
    # workload (shown as a row, recorded as a series), an errored case that kept its ratios (shown and recorded as measured)
    "ab-case-twice": _set("cases", [AB_CASE, AB_CASE]),
    "ab-ratio-name-html": _set(A0, {**AB_CASE, "ratios": [{**AB_CASE["ratios"][0], "name": "<img src=x onerror=alert(1)>"}]}),
    "ab-errored-with-ratios": _both(_set(f"{A0}.status", "error"), _set(f"{A0}.reason", "lost while measuring")),
    # an ok case with its ratios deleted: shown as "nothing was compared" (exit 0), recorded as a run of 0 points
    "ab-ok-without-ratios": _set(f"{A0}.ratios", DELETE),
    # a rate edited beside the intervals split from another: 0.5 said ("A 50% family-wise false-alarm rate") beside an
    # interval at 98%, which is 1% over one case, one verdict and one look
    "ab-family-error-not-its-levels": _both(_set(f"{A0}.confidence", 0.98), _set("family_error", 0.5)),
    # every case edited away, the gate's note on a case's time kept: refused as a file with no case, not for the note
    "ab-no-case-but-time-notes": _both(_set("cases", []), _set("time_notes", [AB_WAITED_NOTE])),
    # head's ab_margin kept beside the very margin that judged the case: `ab` keeps it only where it is another
    "ab-head-margin-its-margin": _both(_set(f"{A0}.margin", 0.05), _set(f"{A0}.head_margin", 0.05)),
}


def _sweep() -> dict[str, Any]:
    """A sweep's folder as `run --executor local --no-wait --job-dir sweep` leaves it, with relative paths (the
    test copies it to `sweep/` in the case's folder) and a job id no process has: the job ended with no results."""
    case = {"id": "matmul[numpy,cpu,size=64]", "experiment": "matmul", "workload": "matmul", "backend": "numpy", "device": "cpu",
            "params": {"size": 64}}  # fmt: skip
    return {
        "asyncbench_sweep": 1,
        "created": "2026-11-23T12:00:00+00:00",
        "name": "hostile",
        "config": {"name": "hostile", "source": "hostile.yaml", "experiments": []},
        "executor": {
            "kind": "local",
            "per": "experiment",
            "partition": None,
            "gpus_per_node": 0,
            "time_min": 5,
            "account": None,
            "exclusive": True,
            "sbatch": {},
        },  # fmt: skip
        "submit_s": 0.2,
        "jobs": [{"name": "matmul", "config": "sweep/matmul.yaml", "results": "sweep/matmul.json", "cases": [case], "job_id": "4194000"}],
    }


J0 = "jobs.0"
#: sweep.json files: name -> change to the good manifest (None: a whole text instead, in SWEEP_TEXTS)
SWEEPS: dict[str, Callable[[dict[str, Any]], None]] = {
    "version-string": _set("asyncbench_sweep", "1"),
    "version-99": _set("asyncbench_sweep", 99),
    "version-huge": _set("asyncbench_sweep", HUGE_FLOAT),
    "version-null": _set("asyncbench_sweep", None),
    "no-jobs": _set("jobs", DELETE),
    "jobs-object": _set("jobs", {"matmul": {}}),
    "jobs-null": _set("jobs", None),
    "job-string": _set("jobs", ["matmul"]),
    "no-executor": _set("executor", DELETE),
    "executor-list": _set("executor", ["local"]),
    "executor-unknown-key": _set("executor.nodes", 4),
    "executor-kind-bogus": _set("executor.kind", "bogus"),
    "executor-sbatch-newline": _set("executor.sbatch", {"qos": "high\n#SBATCH --wrap=touch /tmp/asyncbench-hostile-pwned"}),
    "job-no-job-id": _set(f"{J0}.job_id", DELETE),
    "job-id-number": _set(f"{J0}.job_id", 4194000),
    "job-id-option": _set(f"{J0}.job_id", "--format=x"),
    "job-id-semicolon": _set(f"{J0}.job_id", "1;rm -rf ."),
    "job-id-newline": _set(f"{J0}.job_id", "4194000\n--format=x"),
    "job-id-empty": _set(f"{J0}.job_id", ""),
    "job-id-huge": _set(f"{J0}.job_id", "9" * 40),
    "job-no-results": _set(f"{J0}.results", DELETE),
    "job-results-outside": _set(f"{J0}.results", "/etc/passwd"),
    "job-results-parent": _set(f"{J0}.results", "sweep/../outside.json"),
    "job-config-outside": _set(f"{J0}.config", "/etc/hostname"),
    "job-name-traversal": _set(f"{J0}.name", "../../evil"),
    "job-cases-string": _set(f"{J0}.cases", "matmul"),
    "job-case-unknown-key": _set(f"{J0}.cases.0.extra", 1),
    "job-case-missing-key": _set(f"{J0}.cases.0.backend", DELETE),
    "duplicate-job-names": lambda data: data["jobs"].append(copy.deepcopy(data["jobs"][0])),
    "submit-s-string": _set("submit_s", "fast"),
    "deep-nesting": _set("config.extra", DEEP_LIST),
}
SWEEP_TEXTS: dict[str, bytes] = {
    "not-json": b"asyncbench_sweep = 1\n",
    "empty": b"",
    "json-array": b"[1, 2, 3]\n",
    "json-string": b'"sweep"\n',
    "json-null": b"null\n",
    "not-utf8": b'{"asyncbench_sweep": 1, "name": "\xff\xfe"}\n',
}
JOB_CONFIG = "experiments:\n  - {name: matmul, workload: matmul, backends: [numpy], devices: [cpu], params: {size: 64}}\n"

#: changes to a real census (cases/good/census-raw.json: `run -w conversion -b jax -d cpu --syncs --quick`): its
#: first result's `item` variant's census, each point of which waited in each of its 6 rounds
S0 = "results.0.syncs.item"
CENSUS: dict[str, Callable[[dict[str, Any]], None]] = {
    "census-rounds-2e8": _set(f"{S0}.rounds", 200_000_000),
    "census-rounds-1e15": _set(f"{S0}.rounds", 10**15),
    "census-rounds-unaligned": _set(f"{S0}.rounds", 7),
    "census-round-lists-long": _set(f"{S0}.points.0.calls_rounds", [5.0] * 7),
    "census-no-points-rounds-1e15": lambda data: data["results"][0]["syncs"]["none"].update(rounds=10**15, points=[]),
    "census-file-nul": _set(f"{S0}.points.0.file", "asyncbench/workloads/conversion.py\x00.txt"),
    "census-file-escape": _set(f"{S0}.points.0.file", "\x1b]8;;file:///etc/passwd\x07conversion.py\x1b]8;;\x07"),
    "census-coverage-escape": _set(f"{S0}.coverage", "hooks\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07"),
    # rows moved apart from their own rounds: the census's line for the whole step would contradict them
    "census-calls-negative": _set(f"{S0}.points.0.calls_per_step", -5.0),
    "census-wait-outside-its-interval": _both(_set(f"{S0}.points.0.wait_s_per_step", 1e6), _set(f"{S0}.points.0.wait_ci_s", [2e6, 3e6])),
    "census-wait-not-its-rounds": _both(_set(f"{S0}.points.0.wait_s_per_step", 1.0), _set(f"{S0}.points.0.wait_ci_s", [0.5, 2.0])),
    "census-calls-not-its-rounds": _set(f"{S0}.points.0.calls_per_step", 50.0),
    "census-calls-not-a-count": _set(f"{S0}.points.0.calls_rounds", [5.0, 5.0, 5.0, 5.5, 5.0, 5.0]),
    # the machine's reference, self-consistent but never taken in the case: 1e6 s a sample in a case of 1.5 s
    "reference-samples-beyond-the-case": lambda data: data["results"][0]["reference"].update(
        samples_s=[1e6] * len(data["results"][0]["reference"]["samples_s"])
    ),
    # a reference shorter than its fixed work takes anywhere: "the machine ran 577069× slower during slow2.json"
    "reference-samples-a-nanosecond": lambda data: data["results"][0]["reference"].update(
        samples_s=[1e-9] * len(data["results"][0]["reference"]["samples_s"])
    ),
    # relabelled to the schema before references, its reference kept (and used by compare)
    "reference-in-schema-9": _set("schema_version", 9),
    "harness-sync-above-its-interval": _set("results.0.harness.sync_s", 100.0),
    # a result of status ok whose variants were deleted: its metrics were shown beside "ok" in the variant column
    "variants-deleted": _set("results.0.variants", DELETE),
}

#: changes to a real step form's file (cases/good/step-raw.json: `run -w jstep.py:pure -b jax -d cpu --set
#: max_time_s=2 --threads 1 --bound-verify jit`): its metrics, its `steps`, its bound's verified step
B0 = "results.0.bound.sync_every=0"
STEP: dict[str, Callable[[dict[str, Any]], None]] = {
    "step-slowdown-not-its-samples": _both(_set("results.0.metrics.slowdown_k1", 50.0), _set("results.0.bounds.slowdown_k1", [40.0, 60.0])),
    "step-time-not-its-samples": _both(_set("results.0.metrics.step_s_k0", 1.0), _set("results.0.bounds.step_s_k0", [0.5, 2.0])),
    "step-steps-negative": _set("results.0.params.steps", -20),
    # a metric the step form never writes
    "step-metric-unknown": _set("results.0.metrics.bogus", 1.0),
    "step-steps-float": _set("results.0.params.steps", 20.5),
    "step-steps-not-the-bound": _set("results.0.params.steps", 10),
    "verified-step-outside-its-interval": _set(f"{B0}.verified.step_s", 50.0),
    "verified-step-not-its-rounds": _set(f"{B0}.verified.step_s", 0.0025),
    # a ceiling interval hand-narrowed beside a device slack that may reach 5.8 ms of a 6.78 ms step (its image: to 6.9×)
    "bound-ceiling-ci-not-its-slack": _both(_set(f"{B0}.sides.device.slack_ci_s", [0.0, 0.0058]), _set(f"{B0}.ceiling_ci", [1.0, 1.01])),
    # a host slack hand-set to 15 ms [14–16] where the largest delay injected on the host was 11.6 ms (in a 6.78 ms
    # step): `show` printed it as measured, though the fit looks for a slack only within the delays injected
    "bound-slack-past-its-levels": _both(_set(f"{B0}.sides.host.slack_s", 0.015), _set(f"{B0}.sides.host.slack_ci_s", [0.014, 0.016])),
    "sampling-rounds-beyond-samples": _set("results.0.sampling.rounds", 100_000),
    # fewer rounds than a variant's samples: every timed round adds one sample to every variant, so none holds more
    "sampling-rounds-below-samples": _set("results.0.sampling.rounds", 3),
    # more perturbation rounds said than the observations were taken in: the row read ±? beside "50 rounds"
    "bound-rounds-not-its-observations": _set(f"{B0}.rounds", 50),
    "bound-scale-1e300": _set(f"{B0}.scale_s", 1e300),
    # a scale of 0 beside levels of milliseconds asked as shares of it: `show` exited 0
    "bound-scale-0": _set(f"{B0}.scale_s", 0.0),
    # a bound or a census that is no object: refused as `params.steps` (the key whose check read them first)
    "step-bound-list": _set("results.0.bound", [1]),
    "step-syncs-string": _set("results.0.syncs", "x"),
    # a JAX-on-CPU bound hand-set to not share the host's cores: `show` exited 0 and its reading lost "on shared cores"
    "bound-shares-cores-false-on-cpu": _set(f"{B0}.shares_cores", False),
    # a side's levels hand-set to [0.5] (its observations' medians per level say otherwise): `show` exited 0 and
    # `show --format json` wrote the forged levels back out
    "bound-levels-not-its-observations": _set(f"{B0}.sides.device.levels_s", [0.5]),
    "step-variants-deleted": _set("results.0.variants", DELETE),
    # metrics of a variant the result no longer has: the one they are of (step_s_k1), the one they are against (k0)
    "step-variant-deleted": _set("results.0.variants.sync_every=1", DELETE),
    "step-never-waits-deleted": _both(
        _set("results.0.variants.sync_every=0", DELETE),
        _set("results.0.metrics.step_s_k0", DELETE),
        _set("results.0.bounds.step_s_k0", DELETE),
    ),
    # a variant renamed beside metrics still named for it, with invented values: `show` printed them as measured
    "step-variant-renamed": _both(
        _renamed("results.0.variants", "sync_every=4", "x"),
        _set("results.0.metrics.step_s_k4", 0.5),
        _set("results.0.bounds.step_s_k4", [0.4, 0.6]),
        _set("results.0.metrics.slowdown_k4", 30.0),
        _set("results.0.bounds.slowdown_k4", [29.0, 31.0]),
    ),
    # every variant renamed: no numbered variant left to tell the family by, but its params list it
    "step-variants-renamed": _both(
        _renamed("results.0.variants", "sync_every=0", "a"),
        _renamed("results.0.variants", "sync_every=4", "b"),
        _renamed("results.0.variants", "sync_every=1", "c"),
    ),
    # a variant and its metrics renamed together (k4 as k2): their figures agree, but its params ran sync_every 0, 4, 1
    "step-variant-not-its-params": _both(
        _renamed("results.0.variants", "sync_every=4", "sync_every=2"),
        _renamed("results.0.metrics", "step_s_k4", "step_s_k2"),
        _renamed("results.0.metrics", "slowdown_k4", "slowdown_k2"),
        _renamed("results.0.bounds", "step_s_k4", "step_s_k2"),
        _renamed("results.0.bounds", "slowdown_k4", "slowdown_k2"),
    ),
}

#: census files that are valid data with names that read as rich markup: shown as written, never as markup
#: (tests/e2e/test_hostile_shown.py), in cases/shown/
SHOWN: dict[str, Callable[[dict[str, Any]], None]] = {
    "census-call-markup": _set(f"{S0}.points.0.call", "[link=file:///etc/passwd]jax.Array.item[/link]"),
    "census-call-closing-tag": _set(f"{S0}.points.0.call", "jax.Array.item[/x]"),
}

#: whole files that are not results: name -> text
TEXTS: dict[str, bytes] = {
    "results/not-json.json": b"schema_version: 5\nresults: []\n",
    "results/empty.json": b"",
    "results/truncated.json": b'{"schema_version": 5, "tool": {"name": "asyncbench", "version": "0.1.0"}, "results": [',
    "results/json-array.json": b"[]\n",
    "results/json-string.json": b'"results"\n',
    "results/json-null.json": b"null\n",
    "results/binary.json": bytes(range(256)),
    "results/not-utf8.json": b'{"schema_version": 5, "tool": {"name": "asyncbench\xff"}}',
    "results/nan-top-level.json": b"NaN\n",
    "results/integer-5000-digits.json": b'{"schema_version": 10, "results": [], "tool": {"name": "asyncbench", "version": "'
    + b"1" * 5000
    + b'"}, "size": '
    + b"9" * 5000
    + b"}\n",
    "stores/not-a-db.sqlite": b"not a database\n" * 100,
}


def main() -> None:
    for folder in ("results", "ab", "sweeps", "stores", "shown"):
        shutil.rmtree(CASES / folder, ignore_errors=True)
    good = _results()
    _write(GOOD / "results.json", good)
    other = copy.deepcopy(good)  # another run of the same case: not in the store the test starts from
    other["created"] = "2026-11-24T12:00:00+00:00"
    timed = other["results"][0]["variants"]["matmul"]
    for key in ("median", "ci_low", "ci_high", "min", "max"):  # a median within its interval, as every point is
        timed["done_s"][key] *= 1.01
    timed["samples"]["done_s"] = [value * 1.01 for value in timed["samples"]["done_s"]]  # and its samples' (a reader checks)
    metrics, bounds = other["results"][0]["metrics"], other["results"][0]["bounds"]  # and the figures made of them
    metrics["done_s"] *= 1.01  # the clock restated as a metric (results.matmul_figures)
    bounds["done_s"] = [end * 1.01 for end in bounds["done_s"]]
    metrics["illusion"] *= 1.01
    bounds["illusion"] = [end * 1.01 for end in bounds["illusion"]]
    metrics["gflops"] /= 1.01
    bounds["gflops"] = [end / 1.01 for end in bounds["gflops"]]
    check = other["results"][0]["checks"][0]  # and the check on that median: its value and interval are the median's
    check["value"] = timed["done_s"]["median"]
    check["bounds"] = [timed["done_s"]["ci_low"], timed["done_s"]["ci_high"]]
    _write(GOOD / "results-other.json", other)
    _write(CASES / "results" / "json-array-of-results.json", [good])
    for name, change in RESULTS.items():
        data = copy.deepcopy(good)
        change(data)
        _write(CASES / "results" / f"{name}.json", data)
    ab = json.loads((GOOD / "ab.json").read_text(encoding="utf-8"))
    for name, change in AB.items():
        data = copy.deepcopy(ab)
        change(data)
        _write(CASES / "ab" / f"{name}.json", data)
    census = json.loads((GOOD / "census-raw.json").read_text(encoding="utf-8"))
    for name, change in CENSUS.items():
        data = copy.deepcopy(census)
        change(data)
        _write(CASES / "results" / f"{name}.json", data)
    step = json.loads((GOOD / "step-raw.json").read_text(encoding="utf-8"))
    for name, change in STEP.items():
        data = copy.deepcopy(step)
        change(data)
        _write(CASES / "results" / f"{name}.json", data)
    for name, change in SHOWN.items():
        data = copy.deepcopy(census)
        change(data)
        _write(CASES / "shown" / f"{name}.json", data)
    sweep = _sweep()
    _write(GOOD / "sweep" / "sweep.json", sweep)
    (GOOD / "sweep" / "matmul.yaml").write_text(JOB_CONFIG, encoding="utf-8")
    for name, change in SWEEPS.items():
        data = copy.deepcopy(sweep)
        change(data)
        _write(CASES / "sweeps" / name / "sweep.json", data)
        (CASES / "sweeps" / name / "matmul.yaml").write_text(JOB_CONFIG, encoding="utf-8")
    for name, text in SWEEP_TEXTS.items():
        (CASES / "sweeps" / name).mkdir(parents=True, exist_ok=True)
        (CASES / "sweeps" / name / "sweep.json").write_bytes(text)
    (CASES / "sweeps" / "no-manifest").mkdir(parents=True, exist_ok=True)
    (CASES / "sweeps" / "no-manifest" / "matmul.yaml").write_text(JOB_CONFIG, encoding="utf-8")
    for name, text in TEXTS.items():
        (CASES / name).parent.mkdir(parents=True, exist_ok=True)
        (CASES / name).write_bytes(text)


if __name__ == "__main__":
    main()
