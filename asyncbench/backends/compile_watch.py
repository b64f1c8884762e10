"""torch.compile's step watched for its whole life in a case (`run --bound-verify compile`, issue 52).

From its capture to the end of the case's rounds (CompiledStep.finish), dynamo's log records are kept off the
terminal: its graph-break warnings at the first call (some 14 lines for a `.item()`), said instead in one line of the
row's notes (a caveat: the compiled step runs partly eagerly), and its "hit config.recompile_limit" warnings, which
come later, in the timed rounds. A step that changes a value dynamo guards on each call (a list it appends to, read
by its length) is compiled again each call until the limit (8); past it torch runs the frame eagerly, so the figure
timed is the eager fallback's and its guards', not a compiled step's: `finish` refuses it in one line. Other records
go to the logger's own handlers, and its handlers are put back at the end. torch ≥ 2.1: older torch names the limit
`cache_size_limit`, newer `recompile_limit` (and `accumulated_recompile_limit`).
"""

from __future__ import annotations

import functools
import logging
import re
import warnings
from typing import Any

#: the logger torch.compile's warnings come through (torch._dynamo's modules log under it)
DYNAMO_LOGGER = "torch._dynamo"
#: how a graph break's warning starts ("Graph break from `Tensor.item()`", "Graph break in user code"), lowercased
GRAPH_BREAK = "graph break"
#: the most of a break's first reason (or a recompile's last reason) a line quotes: one line of a row's notes,
#: not dynamo's paragraph
BREAK_REASON_CHARS = 120
#: dynamo's warning at its recompile limit: "torch._dynamo hit config.recompile_limit (8)" (≥ 2.6) or
#: "torch._dynamo hit config.cache_size_limit (8)" (2.1 to 2.5), each with the limit's value
LIMIT_HIT = re.compile(r"hit config\.(\w*(?:recompile|cache_size)_limit) \((\d+)\)")
#: the line of that warning naming the guard that failed last ("last reason: 0/7: len(G['losses']) == 7  # ...")
LAST_REASON = re.compile(r"last reason: (?:\d+/\d+: )?(.*)")
#: how dynamo's counters["unimplemented"] name the limit, lowercased: "Dynamo recompile limit exceeded" (newer
#: torch), "cache_size_limit reached" (2.1): the limit seen where its warning was not
LIMIT_COUNTED = ("recompile limit", "recompile_limit", "cache_size_limit", "cache size limit")


class Watch:
    """What dynamo said while the step lived: the graph breaks of its first call (counters' new reasons, and the
    warnings its loggers and `warnings` gave: dynamo logs a `.item()`'s break once a process, the counters count
    every one), and the recompile limit it hit, if it did."""

    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.logged: list[str] = []
        self.limit: tuple[str, int, str] | None = None  # (its config name, its value, the last guard that failed)
        self._handlers: list[logging.Handler] = []
        self._propagate = True
        self._started = False
        self._unimplemented_before: dict[str, int] = {}

    def start(self) -> None:
        """Dynamo's records caught from now until `stop` (the logger's handlers and propagation put back then)."""
        logger = logging.getLogger(DYNAMO_LOGGER)
        self._handlers, self._propagate = list(logger.handlers), logger.propagate
        passed = self._handlers if self._handlers or not self._propagate else logging.getLogger().handlers
        logger.handlers, logger.propagate = [_Catcher(self, passed)], False
        self._unimplemented_before = dict(_counters("unimplemented") or {})
        self._started = True

    def stop(self) -> None:
        """The logger as it was before `start` (once: a second stop does nothing)."""
        if self._started:
            logger = logging.getLogger(DYNAMO_LOGGER)
            logger.handlers, logger.propagate = self._handlers, self._propagate
            self._started = False
            if self.limit is None:
                self.limit = _counted_limit(self._unimplemented_before)

    def breaks(self) -> str | None:
        """The first call's graph breaks in one line for the row's notes (a caveat, not a refusal), or None."""
        count = len(self.reasons) or len(self.logged)
        if not count:
            return None
        first = (self.reasons or self.logged)[0].strip().splitlines()
        example = (first[0] if first else "")[:BREAK_REASON_CHARS]
        return f"compile: {count} graph break(s): the compiled step runs partly eagerly; e.g. {example}"

    def refused(self) -> str | None:
        """Why the compiled step's time is not a compiled step's (it hit the recompile limit), in one line, or None."""
        if self.limit is None:
            return None
        _, times, reason = self.limit
        said = (
            f"not compiled: torch.compile recompiled the step {times} times (its limit): it runs eagerly past it, so its "
            "time is not a compiled step's; the step changes a guarded value each call"
        )
        return f"{said}: {reason}" if reason else said


class _Catcher(logging.Handler):
    """Keeps dynamo's graph-break and recompile-limit records (said in one line instead) and hands every other to
    the logger's own handlers."""

    def __init__(self, watch: Watch, handlers: list[logging.Handler]) -> None:
        super().__init__(logging.DEBUG)
        self.watch, self.handlers = watch, handlers

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        hit = LIMIT_HIT.search(text)
        if hit is not None:
            if self.watch.limit is None:
                reason = LAST_REASON.search(text)
                said = " ".join(reason.group(1).split())[:BREAK_REASON_CHARS] if reason is not None else ""
                self.watch.limit = (hit.group(1), int(hit.group(2)), said)
            return
        if GRAPH_BREAK in text.lower():
            self.watch.logged.append(text)
            return
        for handler in self.handlers:
            if record.levelno >= handler.level:
                handler.handle(record)


class CompiledStep(functools.partial):  # type: ignore[type-arg]
    """torch.compile's step as the case times it, with its Watch. A partial: its call is C's, so the timed call has
    no Python frame more than the compiled step's own. `finish` ends the watch (after the case's rounds)."""

    watch: Watch

    def finish(self) -> str | None:
        """The watch ended (dynamo's logger put back) and why the step's time is not a compiled step's, or None."""
        self.watch.stop()
        return self.watch.refused()


def first_call(compiled: Any, watch: Watch) -> None:
    """torch.compile's first call (it compiles), its `warnings` caught as its logger's records are (graph breaks
    kept, others warned again after), and the graph breaks its dynamo counters gained read."""
    counters = _counters("graph_break")
    before = dict(counters) if counters is not None else {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            compiled()
    finally:
        for warning in caught:
            if GRAPH_BREAK in str(warning.message).lower():
                watch.logged.append(str(warning.message))
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        if counters is not None:
            watch.reasons = [str(reason) for reason, count in counters.items() for _ in range(count - before.get(reason, 0))]


def _counted_limit(before: dict[str, int]) -> tuple[str, int, str] | None:
    """The recompile limit as dynamo's counters["unimplemented"] saw it hit since `before` (its warning not caught:
    another handler took it), with the limit's value from dynamo's config, or None."""
    counted = _counters("unimplemented") or {}
    if not any(count > before.get(key, 0) and any(name in str(key).lower() for name in LIMIT_COUNTED) for key, count in counted.items()):
        return None
    try:
        from torch._dynamo import config
    except Exception:  # noqa: BLE001 - no dynamo config: the limit's value unsaid
        return "recompile_limit", 0, ""
    name = "recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit"
    return name, int(getattr(config, name, 0)), ""


def _counters(kind: str) -> Any:
    """torch._dynamo's counters of one kind by reason (torch._dynamo.utils.counters[kind]: "graph_break",
    "unimplemented"), or None where this torch has none (or a test's fake compiler runs without torch)."""
    try:
        from torch._dynamo.utils import counters
    except Exception:  # noqa: BLE001 - no dynamo: the breaks are read from the warnings alone
        return None
    return counters[kind]
