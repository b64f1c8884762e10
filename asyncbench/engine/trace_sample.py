"""`--trace`'s traced sample: taken after a warm-up, as a timed one, and where its clocks fell outside every timed
sample's, said in numbers.

A trace is one more call of the variant, after the timed rounds, under the framework's profiler. Its lengths are
that call's, not the measurement's: the profiler has its own cost (JAX's records every Python call and every XLA op;
a matmul issue of 107 µs timed took 12.6 ms traced on a loaded 2-core machine, its generator's call blocked 12 ms
with no event on any thread) and the machine's load at that moment is in it. A reader who opens the file sees one
picture; where that picture's issue or done lies outside the range of every timed sample, the row's trace note
says so (`trace_detail`), so the file's lengths are not read as the row's (the timed median stands).
"""

from __future__ import annotations

import statistics
from typing import Any, Callable, ContextManager, Mapping

from asyncbench.results import units
from asyncbench.results.model import Samples

#: the untimed call before the traced one under a profiler, as the timed samples come after warm-up: the first call
#: under a freshly started jax.profiler took 2.9-12 ms where the next took 0.2 ms and the timed median 0.1 ms (matmul,
#: size 256, 3 products, on the 2-core machine), and a trace of it showed the issue range outlasting the products
WARM_UP = "asyncbench: warm-up"
#: what a traced sample outside the timed range is put down to: the two things in the traced call the timed ones lack
WHY = "the profiler's own cost (and the machine's load at that moment): read the trace for the order of the work, not its lengths"


def _clock(label: str, traced_s: float, timed: tuple[float, ...]) -> str | None:
    """One clock's comparison, or None where the traced sample lies within the timed samples' range."""
    if not timed or min(timed) <= traced_s <= max(timed):
        return None
    spread = f"its {len(timed)} samples {units.seconds(min(timed))}–{units.seconds(max(timed))}"
    return f"{label} took {units.seconds(traced_s)}, the timed median {units.seconds(statistics.median(timed))} ({spread})"


def difference(issue_s: float, done_s: float, timed: Samples | None) -> str | None:
    """Where the traced sample's issue or done time lies outside every timed sample's (the range, not the median's
    interval: one sample is compared with samples), the sentence that says so in numbers; None where both lie within."""
    if timed is None:
        return None
    issue = _clock("the traced sample's issue", issue_s, timed.issue_s)
    done = _clock("its done" if issue else "the traced sample's done", done_s, timed.done_s)
    found = [said for said in (issue, done) if said]
    return f"{', '.join(found)}: {WHY}" if found else None


def differences(traced: Mapping[str, tuple[float, float]], timed: Mapping[str, Samples] | None) -> str | None:
    """Each variant's `difference` (its name first where the case has several), joined: None where none differs."""
    found = {name: difference(issue_s, done_s, (timed or {}).get(name)) for name, (issue_s, done_s) in traced.items()}
    said = [f"{name}: {text}" if len(traced) > 1 else text for name, text in found.items() if text]
    return "; ".join(said) or None


def warm_up(
    run: Callable[[], Any],
    sync: Callable[[], None],
    annotate: Callable[[str], ContextManager[Any]],
    prelude: Callable[[], None] | None = None,
) -> None:
    """One untimed call of the variant and its sync (its prelude first), in a WARM_UP range: under the profiler,
    before the traced call, so that call is not the first the profiler sees."""
    if prelude is not None:
        prelude()
    with annotate(WARM_UP):
        result = run()
        sync()
    del result


def clocks(marks: list[tuple[str, float, float]]) -> tuple[float, float]:
    """The traced call's issue and done times (s), from its marks as trace._run_once made them."""
    (_, start, issued), (_, _, done) = marks[0], marks[1]
    return issued - start, done - start
