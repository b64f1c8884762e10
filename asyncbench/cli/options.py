"""The options several commands share, and the callbacks that read an option once into the typed value the
session takes (a margin as a float, KEY=VALUE pairs as a mapping, a duration in seconds)."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypedDict

import click

from asyncbench.cli import completion
from asyncbench.errors import InputError


def read_margin(context: click.Context, parameter: click.Parameter, value: str) -> float:
    """--max-regression read once, where the command line is read: '10%' -> 0.1 (verdicts.margin.parse_threshold)."""
    from asyncbench.verdicts import margin

    return margin.parse_threshold(value)


def margin_option(default: str, text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--max-regression PCT, read once (read_margin): how much slower still passes. Each gate that takes it says its
    own default and, in `text`, against what the margin is judged."""
    return click.option("--max-regression", default=default, show_default=True, metavar="PCT", callback=read_margin, help=text)


def read_sbatch(context: click.Context, parameter: click.Parameter, value: tuple[str, ...]) -> dict[str, str | bool]:
    """--sbatch KEY=VALUE (or an sbatch flag alone: --sbatch requeue) as a config's `sbatch:` mapping; which keys
    may go without a value is the executor's to say (spec.executor.sbatch_options)."""
    from asyncbench.spec import key_value

    options: dict[str, str | bool] = {}
    for text in value:
        key, given = key_value.split(text, "--sbatch", "qos=high", bare=True)
        options[key] = True if given is None else given
    return options


def read_variables(context: click.Context, parameter: click.Parameter, value: tuple[str, ...]) -> dict[str, str]:
    """--base-env / --head-env KEY=VALUE, each side's variables (session.side_variables.parse_env)."""
    from asyncbench.session import side_variables

    return side_variables.parse_env(value, f"--{str(parameter.name).replace('_', '-')}")


def read_gate_time(context: click.Context, parameter: click.Parameter, value: str | None) -> float | None:
    """--gate-time / --gate-time-max read once: '2m' -> 120.0 seconds (session.requests.parse_gate_time); None stays."""
    from asyncbench.session import requests

    return None if value is None else requests.parse_gate_time(value, f"--{str(parameter.name).replace('_', '-')}")


def read_time_limit(context: click.Context, parameter: click.Parameter, value: str | None) -> str | None:
    """--time-limit read once: '90m' -> '90' minutes, Slurm's 1:30:00 as written (spec.executor.command_line_time);
    a number without its unit is bad input, as --gate-time's is; None stays."""
    from asyncbench.spec import executor

    if value is None:
        return None
    try:
        return executor.command_line_time(value)
    except ValueError as exc:
        raise InputError(f"--time-limit {value!r}: {exc}") from None


def shown_formats() -> list[str]:
    """The formats `show --format` prints besides the table, from the writer registry."""
    from asyncbench.report.writers import WRITERS

    return [name for name, writer in WRITERS.items() if writer.to_stdout]


SHOWN = shown_formats()


def writer_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`run`'s output options, one per registered writer (report.writers): a new format needs no edit here."""
    from asyncbench.report.writers import file_writers, option_dest

    for writer in reversed(file_writers()):
        metavar = "FILE.png" if writer.needs_sweep else "FILE"
        command = click.option(str(writer.option), option_dest(writer), type=click.Path(dir_okay=False), metavar=metavar, help=writer.help)(
            command
        )
    return command


def read_label(context: click.Context, parameter: click.Parameter, value: str | None) -> str | None:
    """A label is stored and shown in terminals and pages: one bounded line (results.fields.name)."""
    from asyncbench.results import fields

    if value is not None:
        try:
            fields.name(value, fields.At("--label"))
        except InputError as exc:
            raise click.BadParameter(exc.message) from None
    return value


def check_pattern(pattern: str | None) -> None:
    """A PATTERN is matched against names, which hold no control character (results.fields.name), and is repeated
    in what the command says: one holding a newline or an escape is bad input (InputError), never searched."""
    from asyncbench.results import fields

    if pattern is not None:
        fields.name(pattern, fields.At("PATTERN"))


def check_recording(record: bool, label: str | None) -> None:
    """`--history` and `--label` say where and how a run is recorded: given without `--record` they would be
    ignored in silence (a label lost, a store never checked), so they are bad input (InputError), said before
    anything runs. ASYNCBENCH_HISTORY is not: it names every command's store, and a run need not record."""
    if record:
        return
    context = click.get_current_context(silent=True)
    history = context is not None and context.get_parameter_source("history") is click.core.ParameterSource.COMMANDLINE
    named = [option for option, given in (("--history", history), ("--label", label is not None)) if given]
    if named:
        them = "them" if len(named) > 1 else "it"
        raise InputError(f"{' and '.join(named)} without --record: nothing would be recorded; add --record, or leave {them} out")


def check_gating(judged_by: str | None, also: tuple[str, ...] = ()) -> None:
    """`--max-regression` says how a change is judged: given where nothing is judged by it (`history` without
    `--fail-on-regression`, `run` or `gather` without `--baseline`), it would be ignored in silence (a gate thought
    set that is not), so it is bad input (InputError), said before anything runs, as check_recording says --label
    without --record. `judged_by`: the option that would use it where it is missing (None: it is used); `also`:
    the command's other options (by parameter name) that only the gate reads (`history --within`)."""
    if judged_by is None:
        return
    context = click.get_current_context(silent=True)
    for name in ("max_regression", *also):
        if context is not None and context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE:
            option = "--" + name.replace("_", "-")
            raise InputError(f"{option} without {judged_by}: nothing would be judged; add {judged_by}, or leave it out")


def history_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--history",
        envvar="ASYNCBENCH_HISTORY",
        metavar="TARGET",
        help="The history store: a file path (SQLite, taken as written) or a postgresql:// URL [env ASYNCBENCH_HISTORY; "
        "default .asyncbench/history.sqlite].",
    )(command)


def selection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """What to run, shared by `run` and `ab`: configs, -w, -d, -b, --set, --quick, read once into the one value the
    command takes, `selection` (session.requests.Selection)."""

    @functools.wraps(command)
    def selected(
        *args: Any,
        configs: tuple[str, ...],
        workloads: tuple[str, ...],
        devices: tuple[str, ...],
        backends: tuple[str, ...],
        sets: tuple[str, ...],
        quick: bool,
        **given: Any,
    ) -> Any:
        from asyncbench.session.requests import Selection

        return command(*args, selection=Selection(configs, workloads, devices, backends, sets, quick), **given)

    for option in reversed(SELECTION):
        selected = option(selected)
    return selected


SELECTION = [
    click.argument("configs", nargs=-1, type=click.Path(dir_okay=False)),
    click.option(
        "-w",
        "--workload",
        "workloads",
        multiple=True,
        metavar="NAME",
        shell_complete=completion.workloads,
        help="Only these workloads (with no CONFIG: run them with defaults): a built-in's name, FILE.py:NAME (your "
        "step or Workload in a file) or package.module:NAME.",
    ),
    click.option("-d", "--device", "devices", multiple=True, metavar="DEV", help="cpu | cuda | cuda:N | auto (overrides the config)."),
    click.option(
        "-b",
        "--backend",
        "backends",
        multiple=True,
        metavar="NAME",
        shell_complete=completion.backends,
        help="numpy | torch | cupy | jax | mxnet (overrides the config).",
    ),
    click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="KEY=VALUE",
        help="Override a param or setting (n_ops=100, sync_async.n_ops=100, max_time_s=2), or sweep a param: n_ops=10,100,1000.",
    ),
    click.option(
        "--quick",
        is_flag=True,
        help="Small sizes and few samples (smoke tests, CI on CPU): each workload's quick sizes (a user's step: at most "
        "5 steps a sample), and settings no larger than warmup 1, min_samples 6, max_samples 20, max_time_s 0.1 s "
        "(max_rel_noise at least 5%). A check whose rounds drift together may need more than 20 rounds for its "
        "interval: under --quick it then ends INCONCLUSIVE, and says how many it needed (raise them with --set).",
    ),
]


def outcome_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """What a finished report is written to and judged by, shared by `run` and `gather`."""
    for option in reversed(OUTCOME):
        command = option(command)
    return command


#: how much progress goes to stderr while cases run (report.progress): on a terminal a live bar, elsewhere a line
#: per finished case (per block under `ab`); never on stdout, so a command's results read the same with any of them
PROGRESS: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
    click.option(
        "-q",
        "--quiet",
        is_flag=True,
        help="No progress on stderr; results, warnings and errors still print. E.g. `asyncbench run -q > results.txt`.",
    ),
    click.option(
        "-v",
        "--verbose",
        is_flag=True,
        help="More progress: run: a line as each case starts and every few seconds while it samples, each case's "
        "rounds and why it stopped; ab: each block's own change and its rounds. E.g. `asyncbench run -v 2> progress.log`.",
    ),
    click.option("--no-progress", is_flag=True, help="The same as -q/--quiet (kept for the scripts that pass it)."),
]


def progress_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """-q/--quiet, -v/--verbose and --no-progress."""
    for option in reversed(PROGRESS):
        command = option(command)
    return command


class ProgressSettings(TypedDict):
    """A request's progress settings (session.requests.Request: `run`'s and `ab`'s)."""

    progress: bool
    verbose: bool


def read_progress(quiet: bool, verbose: bool, no_progress: bool) -> ProgressSettings:
    """A request's `progress` and `verbose` from the PROGRESS options; -q (or --no-progress) with -v is bad input."""
    if verbose and (quiet or no_progress):
        raise InputError("-q/--quiet (or --no-progress) and -v/--verbose: choose one")
    return {"progress": not (quiet or no_progress), "verbose": verbose}


OUTCOME: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
    click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="Write results as JSON: each case kept in FILE.journal as it finishes, FILE written when the run ends.",
    ),
    writer_options,
    click.option(
        "--baseline",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="Compare with an earlier results file; a slowdown shown beyond --max-regression, or a row that cannot tell, exits 1.",
    ),
    margin_option("10%", "How much slower than the baseline still passes."),
    click.option("--strict", is_flag=True, help="A skipped case counts as a failure (exit 1)."),
    click.option(
        "--allow-inconclusive",
        is_flag=True,
        help="An inconclusive check (its interval straddles the threshold, or it has none), or an INCONCLUSIVE row against --baseline, "
        "does not fail the gate; it is still reported.",
    ),
    click.option(
        "--record",
        is_flag=True,
        help="Record the results in the history store (see `asyncbench history`); --history and --label need it.",
    ),
    click.option(
        "--label",
        metavar="TEXT",
        callback=read_label,
        help="A label for the recorded run (a version, a PR; with --record); shown where a change starts.",
    ),
    history_option,
    *PROGRESS,
]

EXECUTOR: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
    click.option(
        "--executor",
        type=click.Choice(["here", "local", "slurm"]),
        help="Where the cases run: here (default), or as jobs through submitit: slurm (one node per job), local "
        "(processes on this machine, the same path). Also the config's executor: kind.",
    ),
    click.option("--per", type=click.Choice(["experiment", "case"]), help="What one job runs [default: experiment]."),
    click.option("--partition", metavar="NAME", help="Slurm partition [default: the cluster's default]."),
    click.option("--gpus-per-node", type=int, metavar="N", help="GPUs each job asks for [default: 0]."),
    click.option(
        "--time-limit",
        "time_min",
        metavar="TIME",
        callback=read_time_limit,
        help="Each job's time limit, with its unit (90m, 2h) or as Slurm's D-HH:MM:SS [default: 60 minutes].",
    ),
    click.option("--account", metavar="NAME", help="Slurm account to charge."),
    click.option("--exclusive/--shared", default=None, help="Each job alone on its node (the default), or sharing it."),
    click.option(
        "--sbatch",
        "sbatch",
        multiple=True,
        metavar="KEY=VALUE",
        callback=read_sbatch,
        help="More sbatch options: --sbatch qos=high --sbatch constraint=h100.",
    ),
    click.option(
        "--job-dir", type=click.Path(file_okay=False), metavar="DIR", help="The jobs folder [default: .asyncbench/jobs/STAMP-NAME]."
    ),
    click.option("--no-wait", is_flag=True, help="Submit, print the jobs folder and return; `asyncbench gather DIR` later."),
]


def executor_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(EXECUTOR):
        command = option(command)
    return command


def executor_settings(executor: str | None, per: str | None, sbatch: dict[str, str | bool], **given: Any) -> dict[str, Any]:
    """The command line's executor settings, keyed as a config's `executor:` (only what was given)."""
    settings = {key: value for key, value in {"kind": executor, "per": per, **given}.items() if value is not None}
    if sbatch:
        settings["sbatch"] = sbatch
    return settings


def quick_bound(quick: bool, bound: bool) -> str | None:
    """The one line `--bound` with `--quick` is told on stderr before anything is measured, None otherwise: --quick's
    max_time_s (spec.schema.QUICK_SETTINGS) gives the perturbation rounds a few times that (measure.perturbation's
    BOUND_TIME_FACTOR), in which most steps take fewer rounds than an interval needs, so its reading comes out
    inconclusive; said once, up front, not only in each variant's note after the run. The exit code is not changed."""
    if not (quick and bound):
        return None
    from asyncbench.results.bound_rule import MIN_ROUNDS

    return (
        f"asyncbench: note: --quick's time leaves too few perturbation rounds for a --bound reading (one needs at least "
        f"{MIN_ROUNDS}): expect it inconclusive; drop --quick, or raise max_time_s, for a reading"
    )
