"""`compare` and `ab`: is one side slower than the other, beyond a margin, by an interval."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Callable

import click

from asyncbench.cli.group import CONTEXT, echo_err, guard, main, stdout
from asyncbench.cli.options import (
    margin_option,
    progress_options,
    quick_bound,
    read_gate_time,
    read_progress,
    read_variables,
    selection_options,
)
from asyncbench.errors import EXIT_GATE, EXIT_OK, InputError

if TYPE_CHECKING:
    from asyncbench.session.requests import Selection


@main.command(
    "compare",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench compare main.json pr.json
  asyncbench compare main.json pr.json --max-regression 5% --format markdown >> "$GITHUB_STEP_SUMMARY"
\b
Verdicts, per case and variant, from the interval of the ratio current /
baseline (Hodges-Lehmann on log times, its exact rank interval: it decides
from a few samples a side) against the margin --max-regression: SLOWER when
the whole interval lies above 1 + margin; a pass when it lies below (FASTER
below 1 / (1 + margin), SAME within the margin, NOT SLOWER when too wide to
say which); INCONCLUSIVE when it reaches across 1 + margin or there is none,
and whatever the interval where a neighbour shared the cores in either run
(below: the same file against itself, beside one, is INCONCLUSIVE).
The rows share a 1% false-alarm rate (Bonferroni). Exit 1 when some case is
SLOWER or INCONCLUSIVE (unless --allow-inconclusive), or ran ok in the
baseline and errored or was skipped now (a case this run did not plan is
listed, not failed: a run of some of the baseline's cases compares those),
and when nothing could be compared (a clock neither
file has, every case skipped); exit 2 when the two files have no case in
common, or either holds none (a run interrupted before its first case).
Each case also times a fixed reference work between its rounds and reads the
CPU pressure: the machine's own change between the two runs widens the row's
interval (a case may feel it from not at all to twice as much), and a
neighbour in either run, or a machine that moved beyond 2x, makes the row
INCONCLUSIVE; a line says what the machine did and by how much. Runs whose
CPU thread pools differ (--threads) ran the reference in those pools: a CPU
case is then judged on its own interval, and a neighbour still makes it
INCONCLUSIVE. Margins under 10% on a shared machine: gate with
`asyncbench ab`, which pairs the two sides in one run.
""",
)
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("current", type=click.Path(dir_okay=False))
@margin_option("10%", "How much slower still passes.")
@click.option(
    "--clock",
    type=click.Choice(["done_s", "issue_s", "device_s"]),
    default="done_s",
    show_default=True,
    help="Which clock's samples to compare.",
)
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table", show_default=True)
@click.option(
    "--allow-inconclusive",
    is_flag=True,
    help=(
        "An INCONCLUSIVE row (its interval reaches across the margin, too few samples for one, or a neighbour in "
        "either run) does not fail the gate."
    ),
)
@guard
def compare_command(baseline: str, current: str, max_regression: float, clock: str, fmt: str, allow_inconclusive: bool) -> None:
    """Compare CURRENT results with BASELINE, case by case (matched by id)."""
    from asyncbench.report import compared, markdown, terminal
    from asyncbench.session import reading
    from asyncbench.verdicts import compare

    base, now = reading.load_results(baseline, echo_err), reading.load_results(current, echo_err)
    empty = [
        f"the {role} {problem}"
        for role, path, report in (("baseline", baseline, base), ("current run", current, now))
        if (problem := reading.no_case(path, report.results, report.interrupted))
    ]
    if empty:  # no case in common, as two files of other cases have none: a comparison of nothing passes nothing
        raise InputError(f"nothing to compare: {'; '.join(empty)}")
    names = (os.path.basename(baseline), os.path.basename(current))
    comparison = compare.compare(base, now, max_regression, clock, allow_inconclusive=allow_inconclusive, names=names)
    if fmt == "json":
        stdout(compare.dumps(comparison))
    elif fmt == "markdown":
        stdout("\n".join(markdown.comparison_lines(compared.comparison(comparison))) + "\n")
    else:
        terminal.print_comparison(compared.comparison(comparison), terminal.stdout_console())
    sys.exit(EXIT_GATE if comparison.failed else EXIT_OK)


#: `ab`'s output files, each a FILE to write: (its option's names, with the keyword it arrives under; its help)
AB_FILES = (
    (("-o", "--output"), "Write the comparison as JSON."),
    (("--markdown", "markdown_path"), "Write a pull-request comment."),
    (
        ("--bmf", "bmf_path"),
        "Also write each paired ratio head/base with its interval as Bencher Metric Format JSON (measure paired_ratio). "
        "E.g. --bmf ab-bmf.json, then: bencher run --adapter json --file ab-bmf.json",
    ),
    (
        ("--junit", "junit_path"),
        "Also write each verdict as a JUnit XML test (SLOWER fails, INCONCLUSIVE as the gate treats it), for CI test "
        "reports. E.g. --junit ab-junit.xml",
    ),
)


def ab_file_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """-o/--output, --markdown, --bmf and --junit (AB_FILES), in that order in `ab --help`."""
    for names, text in reversed(AB_FILES):
        command = click.option(*names, type=click.Path(dir_okay=False), metavar="FILE", help=text)(command)
    return command


@main.command(
    "ab",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench ab configs/ab-gate.yaml --base origin/main             this branch's working tree against main
  asyncbench ab configs/ab-gate.yaml --base v1.2 --head v1.3 -o ab.json --markdown comment.md
  asyncbench ab configs/ab-gate.yaml --base origin/main --junit ab-junit.xml --bmf ab-bmf.json    CI test report, Bencher
  asyncbench ab -w matmul -b torch --base-python ~/venvs/torch212/bin/python      torch 2.12 against this one
  asyncbench ab -w matmul -b numpy --base-env OPENBLAS_NUM_THREADS=1 --head-env OPENBLAS_NUM_THREADS=2
\b
Both sides run in one run, in worker processes started alike; in every
round each variant is sampled once on each side, in a random order, and the
side that is not measuring is frozen (SIGSTOP) so it cannot compete. Rounds
come in blocks, each a fresh pair of processes (a process carries a bias of
its own); each block gives one paired ratio head/base per variant (and per
rate metric); a signed-rank interval over the blocks (narrowed by a
sign-test one that passes over a wild block) decides. The
question is one-sided: SLOWER when the whole interval lies above
1 + margin, a pass (SAME, FASTER or NOT SLOWER) when it lies below,
INCONCLUSIVE otherwise. The gate's time goes to the cases by how far each
is from a decision, and a case stops at the first look that decides it;
past --gate-time (the target) only undecided cases go on, up to
--gate-time-max (the cap, 3x the target, at most a day, unless given), but for one whose
estimate sits on its margin (when the cap runs out, a case one block short
of its first interval, or up to four short of one robust to a wild block,
still gets them, each begun only where the blocks' pace ends it within a
quarter of the target past the cap); an
undecided case says how much more it needs. All verdicts share one false-alarm rate (1%), split over cases,
verdicts and looks. Exit 1 on SLOWER, INCONCLUSIVE (unless
--allow-inconclusive), a result that fails its verification, a case ok on
base that head could not set up (its step raised in set-up or warm-up) or
skipped (lost on head), or nothing compared; 3 when a case could not be set
up on base or errored while measured, on either side; 2 for bad input,
before anything runs.
""",
)
@selection_options
@click.option("--base", "base_rev", metavar="REV", help="The base side's git revision of the config's repository.")
@click.option("--head", "head_rev", metavar="REV", help="The head side's revision [default: the working tree].")
@click.option("--base-python", type=click.Path(dir_okay=False), metavar="PATH", help="Run the base side under this Python.")
@click.option(
    "--base-env", multiple=True, metavar="KEY=VALUE", callback=read_variables, help="A variable set on the base side only (repeatable)."
)
@click.option(
    "--head-env", multiple=True, metavar="KEY=VALUE", callback=read_variables, help="A variable set on the head side only (repeatable)."
)
@margin_option(
    "5%", "The margin: how much slower still passes (a case whose config, on the base side, states `ab_margin: 25%` is judged at that)."
)
@click.option("--allow-inconclusive", is_flag=True, help="An INCONCLUSIVE verdict does not fail the gate.")
@click.option(
    "--gate-time",
    default="120s",
    show_default=True,
    metavar="DURATION",
    callback=read_gate_time,
    help="The gate's target time, with its unit (90s, 2m, 1h: a plain 30 is refused, seconds or minutes?), shared by its cases; "
    "undecided ones may go on to --gate-time-max.",
)
@click.option(
    "--gate-time-max",
    default=None,
    metavar="DURATION",
    callback=read_gate_time,
    help="The most a gate measures (6m, 400s: with its unit, as --gate-time): only cases still undecided at --gate-time go on, up to this "
    "[default: 3 x --gate-time, at most a day]. The looks are planned over it, so a decided case stops sooner.",
)
@ab_file_options
@progress_options
@click.option("--syncs", is_flag=True, help="Also take each side's census of where its step waits: list the sync points new on head.")
@click.option(
    "--bound",
    is_flag=True,
    help="Also take each side's perturbation rounds (as `run --bound`): list the variants whose bound (host, device, "
    "balanced) flipped between base and head. Information only: it never changes the gate's verdict or exit code.",
)
@guard
def ab_command(
    selection: Selection,
    base_rev: str | None,
    head_rev: str | None,
    base_python: str | None,
    base_env: dict[str, str],
    head_env: dict[str, str],
    max_regression: float,
    allow_inconclusive: bool,
    gate_time: float,
    gate_time_max: float | None,
    output: str | None,
    markdown_path: str | None,
    bmf_path: str | None,
    junit_path: str | None,
    quiet: bool,
    verbose: bool,
    no_progress: bool,
    syncs: bool,
    bound: bool,
) -> None:
    """Is head slower than base? Both measured in one run, paired round by round."""
    from asyncbench.report import paired, terminal
    from asyncbench.session import paired as ab
    from asyncbench.session.requests import ABRequest, Gate, Outputs

    told = quick_bound(selection.quick, bound)
    if told is not None:
        echo_err(told)
    files = {"markdown": markdown_path, "bmf": bmf_path, "junit": junit_path}
    request = ABRequest(
        selection=selection,
        outputs=Outputs(output, {name: path for name, path in files.items() if path is not None}),
        gate=Gate(max_regression=max_regression, allow_inconclusive=allow_inconclusive),
        base=base_rev,
        head=head_rev,
        base_python=base_python,
        base_env=base_env,
        head_env=head_env,
        gate_time_s=gate_time,
        gate_time_max_s=gate_time_max,
        **read_progress(quiet, verbose, no_progress),
        syncs=syncs,
        bound=bound,
    )
    ended = ab.run(request, echo_err)
    paired.print_view(ended.view, terminal.stdout_console())
    sys.exit(ended.code)
