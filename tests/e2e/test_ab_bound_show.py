"""`asyncbench show ab.json` of an `ab --bound` file: the flip listed as `ab` printed it; a tampered change (a flip
claimed from an undecided reading, a kind off its vocabulary, a slack that is no time) refused in one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.results.test_bound_change import _flipped, _written
from tests.support.cli import asyncbench


def test_show_lists_the_flip_of_an_ab_bound_file(tmp_path: Path) -> None:
    (tmp_path / "ab.json").write_text(json.dumps(_written(_flipped())))
    done = asyncbench("show", "ab.json", cwd=tmp_path, env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FLIPPED: work[jax,cpu] step: HOST-BOUND on base → DEVICE-BOUND on head" in done.stdout


HOSTILE: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "flip-from-inconclusive": (lambda c: c["head"].update(bound="inconclusive"), "bound_changes[0].change"),
    "kind-unknown": (lambda c: c["base"].update(bound="gpu-bound"), "bound_changes[0].base.bound"),
    "slack-string": (lambda c: c["head"]["slacks"][0].update(slack_s="1ms"), "bound_changes[0].head.slacks[0].slack_s"),
    "why-list": (lambda c: c.update(why=["x"]), "bound_changes[0].why"),
    # issue 52: base's reading edited to host while its slacks (host [0-20.7 µs], device [0-102 µs] of a 2.28 ms
    # step) cannot put the device's above the host's by 7.5% of the step: it was shown as FLIPPED
    "reading-against-its-slacks": (
        lambda c: c["base"].update(
            bound="host",
            step_s=0.00228,
            shortest_step_s=0.00221,
            slacks=[
                {"side": "host", "slack_s": 0.0000051, "slack_ci_s": [0.0, 0.0000207], "at_least_s": None},
                {"side": "device", "slack_s": 0.0000402, "slack_ci_s": [0.0, 0.000102], "at_least_s": None},
            ],
        ),
        "bound_changes[0].base.bound",
    ),
    "slack-outside-its-interval": (lambda c: c["base"]["slacks"][0].update(slack_s=1.0), "bound_changes[0].base.slacks[0].slack_s"),
    "step-0-with-slacks": (lambda c: c["head"].update(step_s=0), "bound_changes[0].head.step_s"),
    "synchronous-with-slacks": (lambda c: c["head"].update(bound="synchronous"), "bound_changes[0].head.slacks"),
    "no-shortest-step": (lambda c: c["base"].update(shortest_step_s=None), "bound_changes[0].base.shortest_step_s"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_bound_change_is_refused_in_one_line(tmp_path: Path, name: str) -> None:
    edit, key = HOSTILE[name]
    raw = _written(_flipped())
    edit(raw["cases"][0]["bound_changes"][0])
    (tmp_path / "ab.json").write_text(json.dumps(raw))
    done = asyncbench("show", "ab.json", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert key in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
