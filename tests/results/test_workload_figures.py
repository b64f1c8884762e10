"""The built-in workloads' paired figures as a results file holds them, held to its samples (results.workload_figures):
a hand-edited saved_fraction or item_cost_s is refused by `show`, an unedited file loads, and each rule is its
workload's own round_metrics."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable

import pytest

from asyncbench.results import workload_figures
from asyncbench.results.model import Clocks
from asyncbench.workloads import BUILT_IN
from tests.support.cli import in_process, refused


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quick async-computation run on numpy, saved (barrier, conversion, matmul and sync_async cases)."""
    folder = tmp_path_factory.mktemp("ac")
    done = in_process("run", "async-computation", "--quick", "-b", "numpy", "-o", "ac.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "ac.json"


def _edited(saved: Path, folder: Path, experiment: str, edit: Callable[[dict[str, Any]], None]) -> Path:
    raw = json.loads(saved.read_text())
    (case,) = [result for result in raw["results"] if result["experiment"] == experiment]
    edit(case)
    target = folder / "edited.json"
    target.write_text(json.dumps(raw))
    return target


def _saved_fraction(case: dict[str, Any]) -> None:
    """The finding's edit: saved_fraction 99% with its interval moved along, [98–99.5]."""
    case["metrics"]["saved_fraction"], case["bounds"]["saved_fraction"] = 0.99, [0.98, 0.995]


def _item_cost(case: dict[str, Any]) -> None:
    """item_cost_s moved within its own interval, away from the median its rounds give."""
    low, high = case["bounds"]["item_cost_s"]
    median = case["metrics"]["item_cost_s"]
    case["metrics"]["item_cost_s"] = high if high - median > median - low else low


def _slowdown_interval(case: dict[str, Any]) -> None:
    """slowdown_print's interval moved up together with its figure."""
    figure = case["metrics"]["slowdown_print"] * 3
    case["metrics"]["slowdown_print"], case["bounds"]["slowdown_print"] = figure, [figure * 0.99, figure * 1.01]


def _sync_experiment(saved: Path) -> str:
    (experiment,) = {r["experiment"] for r in json.loads(saved.read_text())["results"] if r["workload"] == "sync_async"}
    return str(experiment)


def _t1_moved(case: dict[str, Any]) -> None:
    """The finding's edit: t1_s 5 µs in [4–6] µs, where the samples give some 800 ns."""
    case["metrics"]["t1_s"], case["bounds"]["t1_s"] = 5e-6, [4e-6, 6e-6]


def _t3_moved(case: dict[str, Any]) -> None:
    """t3_s (a difference: may lie below 0) moved with its interval."""
    figure = case["metrics"]["t3_s"] + 1e-6
    case["metrics"]["t3_s"], case["bounds"]["t3_s"] = figure, [figure - 1e-7, figure + 1e-7]


@pytest.mark.parametrize(("edit", "key"), [(_t1_moved, "metrics.t1_s"), (_t3_moved, "metrics.t3_s")])
def test_sync_async_s_fitted_model_is_held_to_its_samples(saved: Path, tmp_path: Path, edit: Any, key: str) -> None:
    target = _edited(saved, tmp_path, _sync_experiment(saved), edit)
    refused(in_process("show", target.name, cwd=tmp_path), "edited.json", key, "is not what the samples of case")


def test_a_duration_below_0_is_refused_also_without_samples(saved: Path, tmp_path: Path) -> None:
    """t1_s -1 µs (its interval moved along) was shown as "below 0 by 1.00 µs" and recorded; with the samples
    dropped nothing recomputes it, and a time that is a duration is still refused below 0."""

    def negative(case: dict[str, Any]) -> None:
        case["metrics"]["t1_s"], case["bounds"]["t1_s"] = -1e-6, [-2e-6, -5e-7]
        for variant in case["variants"].values():
            variant["samples"] = {clock: [] for clock in variant["samples"]}
            for clock in variant["samples"]:  # and their counts: a count beside no samples is refused on its own
                if variant.get(clock):
                    variant[clock]["n"] = 0

    target = _edited(saved, tmp_path, _sync_experiment(saved), negative)
    for command in ("show", "record"):
        refused(in_process(command, target.name, cwd=tmp_path), "edited.json", "metrics.t1_s", "a time below 0")


def test_an_unedited_file_loads(saved: Path) -> None:
    done = in_process("show", saved.name, cwd=saved.parent)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("experiment", "edit", "key"),
    [
        ("barriers", _saved_fraction, "metrics.saved_fraction"),
        ("blockers", _item_cost, "metrics.item_cost_s"),
        ("blockers", _slowdown_interval, "metrics.slowdown_print"),
    ],
)
def test_a_figure_its_samples_contradict_is_refused_by_show(saved: Path, tmp_path: Path, experiment: str, edit: Any, key: str) -> None:
    target = _edited(saved, tmp_path, experiment, edit)
    refused(in_process("show", target.name, cwd=tmp_path), "edited.json", key, "is not what the samples of case")


def test_an_interval_its_samples_cannot_give_is_refused(saved: Path, tmp_path: Path) -> None:
    def interval(case: dict[str, Any]) -> None:
        figure = case["metrics"]["saved_fraction"]
        case["bounds"]["saved_fraction"] = [figure - 1e-6, figure + 1e-6]  # around the right median, too narrow

    target = _edited(saved, tmp_path, "barriers", interval)
    refused(in_process("show", target.name, cwd=tmp_path), "bounds.saved_fraction", "is not an interval the samples")


def _round(names: list[str], rng: random.Random) -> dict[str, Clocks]:
    """One round's clocks; some with device times (sync_async's held queue: one that outlasted the issue or not)."""
    clocks = {}
    for name in names:
        done = rng.uniform(1e-4, 1e-2)
        device = done * rng.uniform(0.05, 1.0) if rng.random() < 0.5 else None
        clocks[name] = Clocks(issue_s=done * rng.uniform(0.05, 1.0), done_s=done, device_s=device)
    return clocks


@pytest.mark.parametrize("name", sorted([*workload_figures.RULES, *workload_figures.FAMILY_RULES]))
def test_each_rule_is_its_workloads_own_round_metric(name: str) -> None:
    """The rules restate round_metrics (the layers keep workloads out of the results reader): the same on any clocks,
    and every metric a rule knows is one the workload gives."""
    workload = BUILT_IN[name]
    params = workload.defaults(quick=True)
    rng = random.Random(7)
    family = name in workload_figures.FAMILY_RULES
    variants = [f"sync_every={every}" for every in params["sync_every"]] if family else list(workload.variants)
    for drawn in range(200):
        clocks = _round(variants if drawn % 2 else [v for v in variants if v != "queued"], rng)
        theirs = workload.round_metrics(params, clocks)
        stored = {
            variant: {"issue_s": c.issue_s, "done_s": c.done_s, **({"device_s": c.device_s} if c.device_s is not None else {})}
            for variant, c in clocks.items()
        }
        known = theirs if family else workload_figures.RULES[name]
        for metric in known:
            assert metric in theirs, metric
            rule = workload_figures.rule_of(name, metric)
            assert rule is not None, metric
            ours = rule(params, stored)
            assert (ours is None) == (theirs[metric] is None), metric
            if ours is not None:
                assert ours == pytest.approx(theirs[metric], rel=1e-12, abs=1e-15), metric
