"""`record`, `history` and `report`: results files into the history store, its series with their change
points, and the store as one HTML page."""

from __future__ import annotations

import sys

import click

from asyncbench.cli.group import CONTEXT, echo_err, guard, main, stdout
from asyncbench.cli.options import check_gating, check_pattern, history_option, margin_option, read_label
from asyncbench.errors import EXIT_ERRORS, EXIT_GATE
from asyncbench.history.gate import WITHIN_RUNS


@main.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench record results/*.json                       CI artifacts, files from other machines
  asyncbench record r.json --label v1.2 --history postgresql://ci@db/bench
""",
)
@click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--label", metavar="TEXT", callback=read_label, help="A label for the recorded runs.")
@history_option
@guard
def record(paths: tuple[str, ...], label: str | None, history: str | None) -> None:
    """Record results files in the history store: each file in one transaction, a run recorded once
    (a file recorded again, or a run recorded with `run --record`, is said so and left as it is).

    Every file is read and checked first. Exit 2 for a file that is not a results or `ab` file, holds a
    field out of its vocabulary or holds no case (a run interrupted before its first case finished: a run that
    measured nothing is no run), or a store that cannot be opened (nothing recorded), and when the store
    refused a file (the others are still recorded)."""
    from asyncbench.session import recorder

    sys.exit(recorder.record_files(paths, history, label, echo_err))


@main.command(
    "history",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench history                                   every series, with its change points
  asyncbench history matmul --format json              the matmul cases, for scripts
  asyncbench history --fail-on-regression --max-regression 5%     a CI gate over the history
  asyncbench history --fail-on-regression --within 20  a slowdown fails the gate until it is 20 runs old
""",
)
@click.argument("pattern", required=False)
@history_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 while a series' newest run lies in a slowdown that started within its last --within runs.",
)
@margin_option("10%", "With --fail-on-regression: a change this much slower or less is no regression.")
@click.option(
    "--within",
    default=WITHIN_RUNS,
    show_default=True,
    metavar="N",
    type=click.IntRange(min=1),
    help="With --fail-on-regression: a slowdown fails the gate until it started N runs of its series ago "
    "(a change is found a few runs after it starts; an older one is no longer new).",
)
@click.option(
    "--allow-inconclusive",
    is_flag=True,
    help="With --fail-on-regression: an INCONCLUSIVE series does not fail the gate; it is still reported. Either a "
    "slower change whose ratio has no interval (too few runs on a side for one), or a series too unsteady to tell "
    "(runs enough to search, too few left once the machine's are discounted: beside a neighbour, or on a moved machine).",
)
@click.option("--last", default=40, show_default=True, type=click.IntRange(min=1), help="Points shown per series (changes: all).")
@guard
def history_command(
    pattern: str | None,
    history: str | None,
    fmt: str,
    fail_on_regression: bool,
    max_regression: float,
    within: int,
    allow_inconclusive: bool,
    last: int,
) -> None:
    """Each recorded series (a case's quantity on one machine) with where it changed: the run, before → after,
    the ratio with its 95% interval, and the change's p-value (E-divisive means, Apache Otava).

    PATTERN keeps the series whose case id contains it, as it is written (no
    wildcards): `matmul`, `train_step`, `torch,cpu`.

    With --fail-on-regression, a series fails while its newest run lies in
    the segment its last change started, where that change made it slower
    by more than --max-regression (by the ratio's whole interval) and
    started among its newest --within runs: a change is found a few runs
    after it starts, and the gate fails on each run after that until the
    change is --within runs old (then it passes, unless a newer change is a
    regression too). A slower change whose ratio has no interval ([?]: too
    few runs on a side) is INCONCLUSIVE, never judged by its point ratio, as
    is one whose interval straddles the margin (as ab's and compare's): it
    fails the gate unless --allow-inconclusive; so does a series with runs
    enough to search but too few left once the machine's are discounted
    (too unsteady to tell: a run whose CPU pressure says a neighbour, as
    compare reads it, or whose machine moved). A series too short to judge (fewer runs recorded
    than a search needs: a young one) passes, and one line says how many
    there were and why (where every series is young: that the gate judged
    nothing; it still exits 0, as the history guide says why). A change in
    a series whose figures cannot be told from 0 (every run's interval holds
    0) is not judged, and says so. A change in the machine's
    own series (machine_s, cpu_pressure) is the runner, not the code: a
    note, never a failure.

    Exit 0: the series are shown (and, with --fail-on-regression, none is
    in a new regression, nor INCONCLUSIVE without --allow-inconclusive).
    Exit 1: no series matches PATTERN (or the store holds none), or
    --fail-on-regression found a regression or an INCONCLUSIVE change (each
    named on stderr: where it started, its ratio with its interval, how
    many runs ago). Exit 2: bad input: no store there, a store that cannot be opened
    or is damaged, a PATTERN or option that cannot be read."""
    from asyncbench.history import changes, gate, store, target
    from asyncbench.report import history as shown
    from asyncbench.report import terminal
    from asyncbench.session import recorder

    check_pattern(pattern)
    check_gating(None if fail_on_regression else "--fail-on-regression", also=("within", "allow_inconclusive"))
    recorder.require_history(history, "history")
    opened = store.open_store(target.resolve(history), say=echo_err)
    found = opened.series(pattern, last)
    if fmt == "json":
        stdout(changes.to_json(found))
    else:
        shown.print_series(found, terminal.stdout_console())
    if not found:
        echo_err(f"no series{' matching ' + repr(pattern) if pattern else ''} in the history")
        sys.exit(EXIT_GATE)
    if not fail_on_regression:
        return
    # the gate reads as many runs as --within reaches back, even where fewer are shown
    hits = gate.regressions(found if within <= last else opened.series(pattern, within), max_regression, within)
    for hit in hits:
        echo_err(shown.regression_line(hit, within, allow_inconclusive, margin=max_regression))
    young = gate.too_short(found)
    if young:
        echo_err(shown.too_short_line(young, judged_nothing=gate.judged_nothing(found)))
    if gate.failing(hits, allow_inconclusive):
        sys.exit(EXIT_GATE)


@main.command(
    "report",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench report -o report.html                      the whole history, one page that opens offline
  asyncbench report matmul -o matmul.html --history postgresql://ci@db/bench
""",
)
@click.argument("pattern", required=False)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), metavar="FILE.html", help="Where to write the page.")
@history_option
@guard
def report_command(pattern: str | None, output: str, history: str | None) -> None:
    """Write the history as one self-contained HTML page: a trend chart per case and quantity (machines side by
    side, each point's interval and revision in its tooltip, change points marked), the machines, and the latest
    run's table with its verdicts and timelines. No network needed to open it.

    PATTERN keeps the series whose case id contains it, as it is written (no wildcards).

    Exit 0: the page is written. Exit 1: no series matches PATTERN (or the
    store holds none): no page. Exit 2: bad input (no store there, one that
    cannot be opened or is damaged, a PATTERN or -o that cannot be used).
    Exit 3: the page could not be written."""
    from asyncbench.history import store, target
    from asyncbench.report import html
    from asyncbench.results import outputs
    from asyncbench.session import recorder

    check_pattern(pattern)
    recorder.require_history(history, "report", "plotly")
    outputs.check([("-o", output)], inputs=[("--history", recorder.store_file(history))])
    opened = store.open_store(target.resolve(history), say=echo_err)
    found = opened.series(pattern, html.CHART_POINTS)
    if not found:
        echo_err(f"no series{' matching ' + repr(pattern) if pattern else ''} in the history {opened.target.shown}")
        sys.exit(EXIT_GATE)
    if not outputs.write(output, html.render(found, opened.latest(), opened.recent(html.RECENT_RUNS), opened.target.shown), echo_err):
        sys.exit(EXIT_ERRORS)
    echo_err(f"written: {output} ({len(found)} series)")
