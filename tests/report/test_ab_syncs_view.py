"""`ab --syncs`: the sync points new on head, in ab's table and its pull-request comment; and how they are found."""

from __future__ import annotations

import io

from rich.console import Console

from asyncbench.report import paired as views
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.new_syncs import NewSync
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.results.syncs import Census, SyncKind, SyncPoint
from asyncbench.verdicts import syncs
from asyncbench.verdicts.outcome import Outcome

ITEM = SyncPoint("train.py", 16, SyncKind.CONVERSION, "jax.Array.item", 4.0, 3e-5, (2.7e-5, 4.3e-5), None, (4,) * 6, (3e-5,) * 6)


def _report(new_syncs: tuple[NewSync, ...] | None) -> ABReport:
    side = Side("head", "working tree", "python", "3.11", facts={"cpu_affinity": 2, "thread_variables": {"OMP_NUM_THREADS": "1"}})
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    case = PairedCase("work[jax,cpu]", "ok", ratios=(row,), blocks=10, new_syncs=new_syncs)
    return ABReport("2026-01-01T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", (case,))


def test_a_point_new_on_head_is_a_row_of_the_table_and_of_the_comment():
    view = views.build(_report((NewSync("sync_every=0", ITEM),)), Outcome(0, ()))
    assert view.new_syncs == (("work[jax,cpu]", "sync_every=0", "train.py:16", "conversion", "jax.Array.item", "4", "30.0 µs [27.0–43.0]"),)
    comment = views.markdown(view)
    assert views.SYNC_TITLE in comment
    assert "| work[jax,cpu] | sync_every=0 | `train.py:16` | conversion | `jax.Array.item` | 4 | 30.0 µs [27.0–43.0] |" in comment
    out = io.StringIO()
    views.print_view(view, Console(file=out, width=200))
    assert "train.py:16" in out.getvalue()
    assert '"new_syncs": [' in _report((NewSync("sync_every=0", ITEM),)).to_json()


def test_none_new_is_said_and_no_census_says_nothing():
    none_new = views.build(_report(()), Outcome(0, ()))
    assert none_new.new_syncs == ()
    assert views.NO_NEW_SYNCS in views.markdown(none_new)
    not_asked = views.build(_report(None), Outcome(0, ()))
    assert not_asked.new_syncs is None
    comment = views.markdown(not_asked)
    assert views.NO_NEW_SYNCS not in comment
    assert views.SYNC_TITLE not in comment


def _census(variant: str, *points: SyncPoint) -> Census:
    return Census(variant, 6, points)


def test_new_on_head_compares_points_by_key_variant_by_variant():
    moved = SyncPoint("/base/train.py", 13, SyncKind.CONVERSION, "jax.Array.__float__", 4.0, 1e-5)
    moved_on_head = SyncPoint("/head/train.py", 14, SyncKind.CONVERSION, "jax.Array.__float__", 4.0, 1e-5)
    new = SyncPoint("/head/train.py", 16, SyncKind.CONVERSION, "jax.Array.item", 4.0, 1e-5)

    def key(point: SyncPoint):  # as engine.paired's: the file within its tree, the kind, the call, the line's source
        return point.file.split("/")[-1], point.kind, point.call, "float(w[0, 0])" if point.line in (13, 14) else str(point.line)

    found = syncs.new_on_head(
        {"a": _census("a", moved)}, {"a": _census("a", moved_on_head, new), "b": _census("b", moved_on_head)}, key, key
    )
    assert found == (("a", new),)  # the moved line is no new point; b, absent on base, is read against every base point
    assert syncs.new_on_head({"a": _census("a")}, {"a": _census("a", moved_on_head)}, key, key) == (("a", moved_on_head),)
