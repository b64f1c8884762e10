"""`run`, `gather` and `merge`: the commands that end in a report, judged and saved as one request."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from asyncbench.cli.group import CONTEXT, echo_err, guard, main, stdout
from asyncbench.cli.options import (
    check_gating,
    check_recording,
    executor_options,
    executor_settings,
    outcome_options,
    quick_bound,
    read_progress,
    selection_options,
)
from asyncbench.errors import EXIT_OK
from asyncbench.results.bound import VERIFY_HOWS

if TYPE_CHECKING:
    from asyncbench.session.requests import Selection


@main.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench run                               the built-in default suite
  asyncbench run async-computation             a suite shipped in the package, by name (asyncbench list names them)
  asyncbench run --quick -q                    small sizes, few samples, no progress on stderr (CI smoke test)
  asyncbench run -w matmul -v 2> progress.log  a line as each case starts, ends, and every few seconds between
  asyncbench run -w sync_async -d cpu -o r.json
  asyncbench run -w bench/steps.py:my_step -d cpu       your own step (FILE.py:NAME: an @asyncbench.step function)
  asyncbench run my.yaml --set n_ops=100 --set matmul.size=2048
  asyncbench run -w sync_async --set n_ops=10,100,1000,10000 --plot knee.png     a sweep
  asyncbench run configs/ci-gate.yaml -o new.json --baseline old.json --markdown summary.md
  asyncbench run -w matmul -b jax -d cpu --trace traces/                timelines for ui.perfetto.dev
  asyncbench run -w conversion -b jax -d cpu --syncs                   where each step waited, line by line
  asyncbench run -w train.py:train_step -b jax -d cpu --bound          what bounds your step: host or device, and the slack of each
  asyncbench run my.yaml --executor slurm --partition gpu --gpus-per-node 1 -o all.json   a job per experiment
  asyncbench run my.yaml --shard 2/4 -o shard-2.json     one job of a CI matrix of 4 (then: asyncbench merge)
""",
)
@selection_options
@outcome_options
@click.option(
    "--in-process",
    is_flag=True,
    help="Run cases in this process, not in a worker: starts about a second sooner, but timeout_s is not enforced "
    "and a case that crashes or poisons the CUDA context takes the rest of the run with it.",
)
@click.option(
    "--trace",
    "trace_dir",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="After each case is measured, run every variant once more under its backend's profiler and write a "
    "Chrome-trace timeline per variant into DIR (open in ui.perfetto.dev).",
)
@click.option(
    "--syncs",
    is_flag=True,
    help="Also find where each step waited for the device: every blocking call (.item(), printing, a conversion, an "
    "explicit wait...) with its file:line, kind, calls per step and time blocked, in census rounds of their own "
    "between the timed rounds (the timings are not touched). A case with a census check in `expect:` "
    "(syncs_per_step, sync_wait_s) takes them without it.",
)
@click.option(
    "--bound",
    is_flag=True,
    help="Also measure what bounds each step-form workload's step (@asyncbench.step, -w file.py:Name): the host issuing "
    "work or the device doing it, and how much each can grow before the step slows, by delays injected before each "
    "step call in perturbation rounds of their own between the timed rounds (the timings are not touched). Config: "
    "`bound: true`.",
)
@click.option(
    "--bound-verify",
    type=click.Choice(VERIFY_HOWS),
    help="With --bound (implied): also capture each step (jit: jax.jit; compile: torch.compile; graph: a CUDA graph) "
    "and time it in rounds paired with the plain step's: how much of the ceiling it reached. A step that cannot be "
    "captured faithfully is refused in one line saying why. Config: `bound_verify: jit`.",
)
@click.option(
    "--shard",
    metavar="I/N",
    help="Run only the I-th of N parts of the plan, e.g. --shard 2/4: one job of a CI matrix. Every machine cuts the plan "
    "the same way (balanced by each case's max_time_s); `asyncbench merge` puts the N results files together.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    metavar="N",
    help="Pin every CPU thread pool to N threads (torch's intra-op and inter-op pools, NumPy's BLAS, JAX's XLA, MXNet's "
    "OpenMP; recorded in the results): on shared cores a free pool's time follows the other processes' load. Default: free, as your code "
    "runs; a CPU row measured free on shared cores is warned about.",
)
@executor_options
@guard
def run(
    selection: Selection,
    in_process: bool,
    trace_dir: str | None,
    syncs: bool,
    bound: bool,
    bound_verify: str | None,
    executor: str | None,
    per: str | None,
    sbatch: dict[str, str | bool],
    job_dir: str | None,
    no_wait: bool,
    partition: str | None,
    gpus_per_node: int | None,
    time_min: str | None,
    account: str | None,
    exclusive: bool | None,
    shard: str | None,
    threads: int | None,
    **outcome: Any,
) -> None:
    """Run experiments from CONFIG files (default: the built-in suite) and print the results. A CONFIG that is no
    file but a packaged suite's name (asyncbench list names them) runs that suite.

    Each case runs in a worker process, replaced after a case that errored: a
    case that hangs past its timeout_s setting (default 300 s), crashes or
    poisons the CUDA context is an error row and the others still run.

    With --executor slurm (or local) each experiment, or each case with --per
    case, is a job through submitit, alone on its node; the command follows the
    jobs, gathers their results into one report naming each row's machine, and
    exits as a run here would. Ctrl-C cancels the jobs it submitted.

    Exit 1 when an `expect:` check fails, is inconclusive (its interval
    straddles the threshold, or it has none) or could not be evaluated, when nothing was
    measured, or when a case is slower than --baseline beyond --max-regression
    (its whole interval), INCONCLUSIVE against it, or ok in the baseline and
    errored or skipped now (a baseline case this run did not plan is listed,
    not failed); with --strict, when a case was skipped. An inconclusive verdict
    passes only with --allow-inconclusive. 3 when a case errored. A run's
    checks share a 1% false-alarm rate, split over the checks and the looks
    each takes; a case with checks or a baseline takes at least the rounds
    their intervals need from independent rounds. Rounds that drift together
    need more, which max_time_s or max_samples may cut short: the check is
    then INCONCLUSIVE and says how many rounds it needed.
    """
    from asyncbench.results import shards
    from asyncbench.session import commands, jobs

    cut = shards.parse(shard) if shard is not None else None  # a shard that is none: one line, before the plan is read
    if threads is not None:  # before any worker starts: each inherits the variables before it imports its framework
        from asyncbench.engine import thread_pools

        thread_pools.pin(threads)
        crowded = thread_pools.oversubscribed(threads) if executor != "slurm" else None  # a node's cores are its own
        if crowded:
            echo_err(f"asyncbench: warning: {crowded}")
    told = quick_bound(selection.quick, bound or bound_verify is not None)
    if told is not None:
        echo_err(told)
    chosen = executor_settings(
        executor, per, sbatch, partition=partition, gpus_per_node=gpus_per_node, time_min=time_min, account=account, exclusive=exclusive
    )
    request = _request(
        outcome,
        selection=selection,
        isolate=not in_process,
        trace_dir=trace_dir,
        syncs=syncs,
        bound=bound or bound_verify is not None,
        bound_verify=bound_verify,
        executor=chosen,
        shard=cut,
    )
    ended = commands.run(request, jobs.JobOptions(job_dir=job_dir, wait=not no_wait), echo_err, lambda line: stdout(line + "\n"))
    _finish(ended)


def _request(outcome: dict[str, Any], **what: Any) -> Any:
    """A RunRequest from the outcome options (`OUTCOME`) and what to run (its selection, executor...)."""
    from asyncbench.report.writers import file_writers, option_dest
    from asyncbench.session import requests

    check_recording(outcome["record"], outcome["label"])
    check_gating(None if outcome["baseline"] else "--baseline")
    return requests.RunRequest(
        outputs=requests.Outputs(outcome["output"], {w.name: path for w in file_writers() if (path := outcome.get(option_dest(w)))}),
        gate=requests.Gate(outcome["baseline"], outcome["max_regression"], outcome["strict"], outcome["allow_inconclusive"]),
        recording=requests.Recording(outcome["record"], outcome["history"], outcome["label"]),
        **read_progress(outcome["quiet"], outcome["verbose"], outcome["no_progress"]),
        **what,
    )


def _finish(ended: Any) -> None:
    """Print what a session ended with (nothing when jobs were only submitted) and exit with its code."""
    from asyncbench.report import terminal

    if ended is None:
        sys.exit(EXIT_OK)
    if ended.reports:
        terminal.print_report(ended.view, terminal.stdout_console(), with_outcome=not ended.interrupted)
    sys.exit(ended.code)


@main.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench gather .asyncbench/jobs/20261123-101500-knee -o all.json --markdown all.md
  asyncbench gather DIR --no-wait             what has ended so far, without waiting
  asyncbench gather DIR --record              each job's results into the history, with its machine
""",
)
@click.argument("folder", type=click.Path(file_okay=False))
@outcome_options
@click.option("--no-wait", is_flag=True, help="Take what has ended, without waiting for the jobs still queued or running.")
@guard
def gather(folder: str, no_wait: bool, **outcome: Any) -> None:
    """Gather a submission's jobs from their jobs FOLDER (`run --executor ... --no-wait` printed it) into one report, as `run` would.

    Waits for the jobs still queued or running unless --no-wait; a job that
    failed, was cancelled, timed out or was preempted is an error row with
    Slurm's state and reason. Gathering changes nothing in FOLDER: run it as
    often as wanted (recording twice stores once). Ctrl-C stops waiting; the
    jobs go on.
    """
    from asyncbench import extras
    from asyncbench.session import following

    extras.require("gather", "submitit")  # the jobs are read through it: said before the folder is
    request = _request(outcome)
    ended = following.gather(folder, request, echo_err, wait=not no_wait)
    _finish(ended)


@main.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench merge shard-1.json shard-2.json shard-3.json shard-4.json -o all.json --markdown all.md
  asyncbench merge shards/*.json -o all.json --baseline main.json      the merged report gated against a baseline
""",
)
@click.argument("shard_files", metavar="SHARD.json...", nargs=-1, required=True, type=click.Path(dir_okay=False))
@outcome_options
@guard
def merge(shard_files: tuple[str, ...], **outcome: Any) -> None:
    """Merge the results files of a plan's N shards (`run --shard I/N`, one per job of a CI matrix) into one report.

    Every row names the machine it ran on; the report renders, compares and
    records like any results file, and is judged as `run` judges (exit 1, 3).
    Exit 2, naming the shard, when the files are shards of different plans or
    asyncbench versions, one is missing or one is given twice. A shard cut
    short gives an error row for each case it did not finish.
    """
    from asyncbench.session import shards

    ended = shards.merge(shard_files, _request(outcome), echo_err)
    _finish(ended)
