"""An `ab` gate's progress (session/block_progress.py): a line per block as it ends, the line that says a case is decided or
stopped, and a block line masking what a side's error quotes of its secrets. The sides are made-up samples (no
process), the display a plain one off a terminal (a CI log).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from rich.console import Console

from asyncbench.engine import gate_time, paired
from asyncbench.report import progress
from asyncbench.report.progress import ProgressDisplay
from asyncbench.results import blocks
from asyncbench.results.model import Case, Settings
from asyncbench.session import block_progress
from asyncbench.workloads.base import Prepared, Workload
from tests.support.streams import Flushes


class _Work(Workload):
    name = "fake-work"
    variants = ("step",)

    def setup(self, backend: Any, device: str, params: Any) -> Prepared:  # pragma: no cover - never set up here
        raise NotImplementedError


class SampleClock:
    """The time module as the gate's code reads it, but for perf_counter: advanced by the samples alone, so that how
    many blocks fit in the gate's time does not rest on the machine's load (a loaded run fitted 6, too few for the
    look the test needs)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


class _Side:
    """A side of made-up samples (head `slower` by a factor) that notes, at each case's set-up, what stderr shows."""

    def __init__(self, name: str, slower: float, stream: Flushes, seen: list[tuple[str, int]]):
        self.name, self.tree, self.slower, self.stream, self.seen = name, None, slower, stream, seen
        self.rng = random.Random(name)
        self.sleep_s = 0.0
        self.clock: SampleClock | None = None

    def renew(self, backend: Any) -> None:
        pass

    def ready(self, timeout_s: float) -> None:
        pass

    def send(self, command: str, payload: Any) -> None:
        self.pending = (command, payload)
        if command == "setup" and self.name == "base":
            self.seen.append((payload[0].id, len(self.stream.getvalue().splitlines())))

    def receive(self, timeout_s: float) -> Any:
        return self.call(*self.pending, timeout_s)

    def call(self, command: str, payload: Any, timeout_s: float) -> Any:
        if command == "setup":
            return {"variants": ["step"], "asynchronous": False}
        if command == "sample":
            if self.clock is not None:
                self.clock.now += self.sleep_s  # a sample's time on the test's own clock: the same under any load
            else:
                time.sleep(self.sleep_s)
            done = 1e-3 * self.slower * math.exp(self.rng.gauss(0, 0.001))
            return done, done, None
        return None

    def close(self) -> None:
        pass


def test_ab_writes_a_line_per_block_as_it_ends_and_says_when_a_case_is_decided(monkeypatch):
    monkeypatch.setattr(blocks, "BLOCK_MIN_S", 0.0)
    stream, seen = Flushes(), []
    console = Console(file=stream, force_terminal=False)
    sides = (_Side("base", 1.0, stream, seen), _Side("head", 1.0, stream, seen))
    cases = [Case(f"m{i}[numpy,cpu]", "e", "fake-work", "numpy", "cpu", {}, Settings(warmup=0, timeout_s=10)) for i in range(2)]
    pairings = [paired.Pairing(case, case, sides, _Work(), 0.005, 0.05) for case in cases]  # type: ignore[arg-type]
    display = ProgressDisplay(True, console)
    with display:
        block_progress.report_blocks(pairings, display)
        started = time.perf_counter()
        gate_time.gate(pairings, 30.0)
    assert time.perf_counter() - started < 20
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[1/2] m0[numpy,cpu]  block 1  change: step ")
    assert lines[1].startswith("[2/2] m1[numpy,cpu]  block 1  change: step ")
    assert "block 2 of " in lines[2]
    decided = [line for line in lines if "decided: stops" in line]
    assert [line[:5] for line in decided] == ["[1/2]", "[2/2]"]
    assert all(" SAME " in line for line in decided)
    assert not [line for line in lines if "stopped" in line]  # each said it stops where it decided, once
    assert len(lines) == len({line[:5] + line.split("  ")[1] for line in lines})  # a line per block, none twice
    # each case's set-up saw the line of the block before it: the lines are written as the blocks end
    assert seen[:3] == [("m0[numpy,cpu]", 0), ("m1[numpy,cpu]", 1), ("m0[numpy,cpu]", 2)]
    assert "\x1b" not in stream.getvalue()


def test_an_ab_case_out_of_time_says_once_that_it_stopped_with_its_last_look(monkeypatch):
    monkeypatch.setattr(blocks, "BLOCK_MIN_S", 0.0)
    stream, seen = Flushes(), []
    sides = (_Side("base", 1.0, stream, seen), _Side("head", 1.05, stream, seen))  # on its 5% margin: undecided
    for side in sides:
        side.sleep_s = 0.001  # a block takes about 10 ms: the gate's 0.2 s run out
    case = Case("m[numpy,cpu]", "e", "fake-work", "numpy", "cpu", {}, Settings(warmup=0, timeout_s=10))
    pairing = paired.Pairing(case, case, sides, _Work(), 0.005, 0.05)  # type: ignore[arg-type]
    with ProgressDisplay(True, Console(file=stream, force_terminal=False)) as display:
        block_progress.report_blocks([pairing], display)
        (row,) = gate_time.gate([pairing], 0.2)
    lines = stream.getvalue().splitlines()
    assert [line for line in lines if "stopped" in line] == [lines[-1]]
    (last,) = row.ratios
    assert f"last look: step {progress.change_text(last.ratio)} {progress._interval(last)} {last.label}  stopped" in lines[-1]
    assert not [line for line in lines if "decided" in line]


def test_an_ab_case_decided_by_the_look_it_takes_as_its_time_runs_out_says_decided_not_stopped(monkeypatch):
    """A case whose one look is taken as the gate's time runs out, and decides it: its last line says so (the table
    says "decided, but only at its one look"); `stopped` is an undecided case's word (docs/guides/ci.md). It read
    `last look: sync_every=0 +1.0% [−1.4% … +4.4%] SAME  stopped`."""
    monkeypatch.setattr(blocks, "BLOCK_MIN_S", 0.0)
    stream, seen = Flushes(), []
    sides = (_Side("base", 1.0, stream, seen), _Side("head", 1.0, stream, seen))  # unchanged, quiet: SAME at a look
    clock = SampleClock()
    monkeypatch.setattr(gate_time, "time", clock)
    monkeypatch.setattr(paired, "time", clock)
    for side in sides:
        side.sleep_s, side.clock = 0.001, clock  # a block takes about 10 ms: the gate's 0.15 s run out before a scheduled look
    case = Case("m[numpy,cpu]", "e", "fake-work", "numpy", "cpu", {}, Settings(warmup=0, timeout_s=10))
    pairing = paired.Pairing(case, case, sides, _Work(), 0.005, 0.05)  # type: ignore[arg-type]
    with ProgressDisplay(True, Console(file=stream, force_terminal=False)) as display:
        block_progress.report_blocks([pairing], display)
        (row,) = gate_time.gate([pairing], 0.15)
    lines = stream.getvalue().splitlines()
    (last,) = row.ratios
    assert str(last.label) == "SAME", lines  # the scenario: decided, at the look taken as it stopped
    assert f"last look: step {progress.change_text(last.ratio)} {progress._interval(last)} SAME  decided at its last look" in lines[-1]
    assert not [line for line in lines if "stopped" in line]


def test_an_ab_block_line_masks_a_sides_secret_quoted_in_its_error():
    from asyncbench.results.paired import PairedCase
    from asyncbench.session.side_variables import scrubber

    case = Case("m[numpy,cpu]", "e", "fake-work", "numpy", "cpu", {}, Settings())
    pairing = paired.Pairing(case, case, (None, None), _Work(), 0.005, 0.05)  # type: ignore[arg-type]
    pairing.done = PairedCase.of(case, "error", "head: ValueError: token is abc123secret")
    block = block_progress.block_of(pairing, 0, 1, scrubber({}, {"API_TOKEN": "abc123secret"}))
    line = progress.block_line(block)
    assert "abc123secret" not in line
    assert line.startswith("[1/1] m[numpy,cpu]  error: head: ValueError: token is ***")
