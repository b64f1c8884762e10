"""The click layer: parse the command line, hand it to a session, print what came back, exit with its code.

Exit codes (errors.py): 0 all good · 1 a gate failed (a check failed, was
inconclusive or not measured; a regression; nothing measured; --strict and
a skip) · 2 bad input, one clear line, never a traceback · 3 some cases
errored while the rest ran and were saved · 130/143 interrupted, what
finished is saved. Modules beyond click are imported inside the commands
that need them, so `--help` starts fast; nothing here runs, judges or
formats: `session` runs, `verdicts` judge, `report` formats.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable

import click

from asyncbench.errors import EXIT_ERRORS, EXIT_GATE, EXIT_INPUT, EXIT_OK, InputError, each_error
from asyncbench.version import __version__

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _report_input_error(error: InputError) -> None:
    """Each mistake on a line of its own (a config's every mistake, in line order)."""
    for one in each_error(error):
        click.echo(f"asyncbench: error: {one}", err=True)


def _guard(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn InputError into one line per mistake on stderr and exit 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except InputError as error:
            _report_input_error(error)
            sys.exit(EXIT_INPUT)

    return wrapper


class _Commands(click.Group):
    """The command group: an InputError raised while a command's options are read (a callback below parsing a
    margin, a KEY=VALUE, a duration) is one line per mistake and exit 2, as one raised by the command is (_guard)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as error:
            _report_input_error(error)
            sys.exit(EXIT_INPUT)


def _margin(context: click.Context, parameter: click.Parameter, value: str) -> float:
    """--max-regression read once, where the command line is read: '10%' -> 0.1 (verdicts.compare.parse_threshold)."""
    from asyncbench.verdicts import compare

    return compare.parse_threshold(value)


def _sbatch(context: click.Context, parameter: click.Parameter, value: tuple[str, ...]) -> dict[str, str | bool]:
    """--sbatch KEY=VALUE (or an sbatch flag alone: --sbatch requeue) as a config's `sbatch:` mapping; which keys
    may go without a value is the executor's to say (spec.executor.sbatch_options)."""
    from asyncbench.spec import key_value

    options: dict[str, str | bool] = {}
    for text in value:
        key, given = key_value.split(text, "--sbatch", "qos=high", bare=True)
        options[key] = True if given is None else given
    return options


def _variables(context: click.Context, parameter: click.Parameter, value: tuple[str, ...]) -> dict[str, str]:
    """--base-env / --head-env KEY=VALUE, each side's variables (session.side_variables.parse_env)."""
    from asyncbench.session import side_variables

    return side_variables.parse_env(value, f"--{str(parameter.name).replace('_', '-')}")


def _gate_time(context: click.Context, parameter: click.Parameter, value: str) -> float:
    """--gate-time read once: '2m' -> 120.0 seconds (session.paired.parse_gate_time)."""
    from asyncbench.session import paired

    return paired.parse_gate_time(value)


def _echo_err(text: str) -> None:
    click.echo(text, err=True)


def _stdout(text: str) -> None:
    """Text for another program (JSON, CSV, markdown) on stdout as it is; a reader that stops early is no failure."""
    from asyncbench.report.terminal import write_stdout

    write_stdout(text)


def _shown_formats() -> list[str]:
    """The formats `show --format` prints besides the table, from the writer registry."""
    from asyncbench.report.writers import WRITERS

    return [name for name, writer in WRITERS.items() if writer.to_stdout]


_SHOWN = _shown_formats()


def _writer_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`run`'s output options, one per registered writer (report.writers): a new format needs no edit here."""
    from asyncbench.report.writers import file_writers, option_dest

    for writer in reversed(file_writers()):
        metavar = "FILE.png" if writer.needs_sweep else "FILE"
        command = click.option(str(writer.option), option_dest(writer), type=click.Path(dir_okay=False), metavar=metavar, help=writer.help)(
            command
        )
    return command


def _label(context: click.Context, parameter: click.Parameter, value: str | None) -> str | None:
    """A label is stored and shown in terminals and pages: one bounded line (results.fields.name)."""
    from asyncbench.results import fields

    if value is not None:
        try:
            fields.name(value, fields.At("--label"))
        except InputError as exc:
            raise click.BadParameter(exc.message) from None
    return value


def _check_pattern(pattern: str | None) -> None:
    """A PATTERN is matched against names, which hold no control character (results.fields.name), and is repeated
    in what the command says: one holding a newline or an escape is bad input (InputError), never searched."""
    from asyncbench.results import fields

    if pattern is not None:
        fields.name(pattern, fields.At("PATTERN"))


def _history_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--history",
        envvar="ASYNCBENCH_HISTORY",
        metavar="TARGET",
        help="The history store: a file (SQLite) or a postgresql:// URL [env ASYNCBENCH_HISTORY; default .asyncbench/history.sqlite].",
    )(command)


def _selection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """What to run, shared by `run` and `ab`: configs, -w, -d, -b, --set, --quick."""
    for option in reversed(_SELECTION):
        command = option(command)
    return command


_SELECTION = [
    click.argument("configs", nargs=-1, type=click.Path(dir_okay=False)),
    click.option(
        "-w",
        "--workload",
        "workloads",
        multiple=True,
        metavar="NAME",
        help="Only these workloads (with no CONFIG: run them with defaults).",
    ),
    click.option("-d", "--device", "devices", multiple=True, metavar="DEV", help="cpu | cuda | cuda:N | auto (overrides the config)."),
    click.option(
        "-b", "--backend", "backends", multiple=True, metavar="NAME", help="numpy | torch | cupy | jax | mxnet (overrides the config)."
    ),
    click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="KEY=VALUE",
        help="Override a param or setting (n_ops=100, sync_async.n_ops=100, max_time_s=2), or sweep a param: n_ops=10,100,1000.",
    ),
    click.option("--quick", is_flag=True, help="Small sizes and few samples (smoke tests, CI on CPU)."),
]


@click.group(
    cls=_Commands,
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench run --quick                      the built-in suite, small sizes (a smoke test)
  asyncbench run -w sync_async -d cpu -o r.json
  asyncbench run configs/async-computation.yaml -b torch -d cuda:0
  asyncbench show r.json                      re-render saved results
  asyncbench compare old.json new.json        SAME / FASTER / SLOWER / INCONCLUSIVE per case
  asyncbench list                             workloads, params and metrics
  asyncbench devices                          what can run here, and why not
  asyncbench run my.yaml --record && asyncbench history     keep every run; where did it get slower?
  asyncbench report -o report.html            the history as one page that opens offline
""",
)
@click.version_option(__version__, "-V", "--version", prog_name="asyncbench")
def main() -> None:
    """Measure asynchronous execution in array frameworks (PyTorch, CuPy, NumPy, JAX, MXNet).

    Every sample has three clocks: issue (until Python gets control back),
    done (until the device finished) and device (CUDA events). Their gap is
    what a timer without a sync gets wrong. JAX and MXNet show it on a CPU.
    """


def _outcome_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """What a finished report is written to and judged by, shared by `run` and `gather`."""
    for option in reversed(_OUTCOME):
        command = option(command)
    return command


_OUTCOME: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
    click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="Write results as JSON: each case kept in FILE.journal as it finishes, FILE written when the run ends.",
    ),
    _writer_options,
    click.option(
        "--baseline",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="Compare with an earlier results file; a slowdown shown beyond --max-regression, or a row that cannot tell, exits 1.",
    ),
    click.option(
        "--max-regression",
        default="10%",
        show_default=True,
        metavar="PCT",
        callback=_margin,
        help="How much slower than the baseline still passes.",
    ),
    click.option("--strict", is_flag=True, help="A skipped case counts as a failure (exit 1)."),
    click.option(
        "--allow-inconclusive",
        is_flag=True,
        help="An inconclusive check (its interval straddles the threshold), or an INCONCLUSIVE row against --baseline, "
        "does not fail the gate; it is still reported.",
    ),
    click.option("--record", is_flag=True, help="Record the results in the history store (see `asyncbench history`)."),
    click.option(
        "--label", metavar="TEXT", callback=_label, help="A label for the recorded run (a version, a PR); shown where a change starts."
    ),
    _history_option,
    click.option("--no-progress", is_flag=True, help="No progress display on stderr."),
]

_EXECUTOR: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
    click.option(
        "--executor",
        type=click.Choice(["here", "local", "slurm"]),
        help="Where the cases run: here (default), or as jobs through submitit: slurm (one node per job), local "
        "(processes on this machine, the same path). Also the config's executor: kind.",
    ),
    click.option("--per", type=click.Choice(["experiment", "case"]), help="What one job runs [default: experiment]."),
    click.option("--partition", metavar="NAME", help="Slurm partition [default: the cluster's default]."),
    click.option("--gpus-per-node", type=int, metavar="N", help="GPUs each job asks for [default: 0]."),
    click.option("--time-limit", "time_min", metavar="TIME", help="Each job's time limit: minutes or D-HH:MM:SS [default: 60]."),
    click.option("--account", metavar="NAME", help="Slurm account to charge."),
    click.option("--exclusive/--shared", default=None, help="Each job alone on its node (the default), or sharing it."),
    click.option(
        "--sbatch",
        "sbatch",
        multiple=True,
        metavar="KEY=VALUE",
        callback=_sbatch,
        help="More sbatch options: --sbatch qos=high --sbatch constraint=h100.",
    ),
    click.option(
        "--job-dir", type=click.Path(file_okay=False), metavar="DIR", help="The sweep's folder [default: .asyncbench/jobs/STAMP-NAME]."
    ),
    click.option("--no-wait", is_flag=True, help="Submit, print the sweep's folder and return; `asyncbench gather DIR` later."),
]


def _executor_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_EXECUTOR):
        command = option(command)
    return command


def _executor_settings(executor: str | None, per: str | None, sbatch: dict[str, str | bool], **given: Any) -> dict[str, Any]:
    """The command line's executor settings, keyed as a config's `executor:` (only what was given)."""
    settings = {key: value for key, value in {"kind": executor, "per": per, **given}.items() if value is not None}
    if sbatch:
        settings["sbatch"] = sbatch
    return settings


@main.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench run                               the built-in default suite
  asyncbench run --quick --no-progress         small sizes, few samples (CI smoke test)
  asyncbench run -w sync_async -d cpu -o r.json
  asyncbench run my.yaml --set n_ops=100 --set matmul.size=2048
  asyncbench run -w sync_async --set n_ops=10,100,1000,10000 --plot knee.png     a sweep
  asyncbench run configs/ci-gate.yaml -o new.json --baseline old.json --markdown summary.md
  asyncbench run -w matmul -b jax -d cpu --trace traces/                timelines for ui.perfetto.dev
  asyncbench run my.yaml --executor slurm --partition gpu --gpus-per-node 1 -o all.json   a job per experiment
  asyncbench run my.yaml --shard 2/4 -o shard-2.json     one job of a CI matrix of 4 (then: asyncbench merge)
""",
)
@_selection_options
@_outcome_options
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
    "--shard",
    metavar="I/N",
    help="Run only the I-th of N parts of the plan, e.g. --shard 2/4: one job of a CI matrix. Every machine cuts the plan "
    "the same way (balanced by each case's max_time_s); `asyncbench merge` puts the N results files together.",
)
@_executor_options
@_guard
def run(
    configs: tuple[str, ...],
    workloads: tuple[str, ...],
    devices: tuple[str, ...],
    backends: tuple[str, ...],
    sets: tuple[str, ...],
    quick: bool,
    in_process: bool,
    trace_dir: str | None,
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
    **outcome: Any,
) -> None:
    """Run experiments from CONFIG files (default: the built-in suite) and print the results.

    Each case runs in a worker process, replaced after a case that errored: a
    case that hangs past its timeout_s setting (default 300 s), crashes or
    poisons the CUDA context is an error row and the others still run.

    With --executor slurm (or local) each experiment, or each case with --per
    case, is a job through submitit, alone on its node; the command follows the
    jobs, gathers their results into one report naming each row's machine, and
    exits as a run here would. Ctrl-C cancels the jobs it submitted.

    Exit 1 when an `expect:` check fails, is inconclusive (its interval
    straddles the threshold) or could not be evaluated, when nothing was
    measured, or when a case is slower than --baseline beyond --max-regression
    (its whole interval) or INCONCLUSIVE against it; an inconclusive verdict
    passes only with --allow-inconclusive. 3 when a case errored. A run's
    checks share a 1% false-alarm rate, split over the checks and the looks
    each takes; a case with checks or a baseline takes at least the rounds
    their intervals need.
    """
    from asyncbench.results import shards
    from asyncbench.session import commands, jobs, requests

    cut = shards.parse(shard) if shard is not None else None  # a shard that is none: one line, before the plan is read
    chosen = _executor_settings(
        executor, per, sbatch, partition=partition, gpus_per_node=gpus_per_node, time_min=time_min, account=account, exclusive=exclusive
    )
    selection = requests.Selection(configs, workloads, devices, backends, sets, quick)
    request = _request(outcome, selection=selection, isolate=not in_process, trace_dir=trace_dir, executor=chosen, shard=cut)
    ended = commands.run(request, jobs.JobOptions(job_dir=job_dir, wait=not no_wait), _echo_err, lambda line: _stdout(line + "\n"))
    _finish(ended)


def _request(outcome: dict[str, Any], **what: Any) -> Any:
    """A RunRequest from the outcome options (`_OUTCOME`) and what to run (its selection, executor...)."""
    from asyncbench.report.writers import file_writers, option_dest
    from asyncbench.session import requests

    return requests.RunRequest(
        outputs=requests.Outputs(outcome["output"], {w.name: path for w in file_writers() if (path := outcome.get(option_dest(w)))}),
        gate=requests.Gate(outcome["baseline"], outcome["max_regression"], outcome["strict"], outcome["allow_inconclusive"]),
        recording=requests.Recording(outcome["record"], outcome["history"], outcome["label"]),
        progress=not outcome["no_progress"],
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
  asyncbench gather .asyncbench/jobs/20261123-101500-sweep -o all.json --markdown all.md
  asyncbench gather DIR --no-wait             what has ended so far, without waiting
  asyncbench gather DIR --record              each job's results into the history, with its machine
""",
)
@click.argument("folder", type=click.Path(file_okay=False))
@_outcome_options
@click.option("--no-wait", is_flag=True, help="Take what has ended, without waiting for the jobs still queued or running.")
@_guard
def gather(folder: str, no_wait: bool, **outcome: Any) -> None:
    """Gather a sweep's jobs (`run --executor ... --no-wait` printed FOLDER) into one report, as `run` would.

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
    ended = following.gather(folder, request, _echo_err, wait=not no_wait)
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
@_outcome_options
@_guard
def merge(shard_files: tuple[str, ...], **outcome: Any) -> None:
    """Merge the results files of a plan's N shards (`run --shard I/N`, one per job of a CI matrix) into one report.

    Every row names the machine it ran on; the report renders, compares and
    records like any results file, and is judged as `run` judges (exit 1, 3).
    Exit 2, naming the shard, when the files are shards of different plans or
    asyncbench versions, one is missing or one is given twice. A shard cut
    short gives an error row for each case it did not finish.
    """
    from asyncbench.session import shards

    ended = shards.merge(shard_files, _request(outcome), _echo_err)
    _finish(ended)


@main.command("list", context_settings=CONTEXT)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def list_workloads(fmt: str) -> None:
    """Describe every workload: what it measures, its params (default / quick), variants and metrics.

    Installed plugins (entry point group asyncbench.workloads) are listed after the built-in ones, with
    where they come from; one that cannot be loaded is a line saying why.
    """
    from pathlib import Path

    from asyncbench.report import catalog, terminal
    from asyncbench.workloads import BUILT_IN, plugins

    shown = list(BUILT_IN.values())
    origins, broken = {}, []
    for plugin in plugins.plugins().values():
        try:
            workload = plugins.load(plugins.canonical(plugin.name, Path.cwd()))
        except InputError as exc:
            broken.append(f"plugin {plugin.name!r} ({plugin.distribution}, {plugin.target}) cannot be loaded: {exc.message}")
            continue
        shown.append(workload)
        origins[workload.name] = f"plugin {plugin.name!r}: {plugin.target}, installed by {plugin.distribution}"
    if fmt == "json":
        _stdout(catalog.workloads_json(shown, origins) + "\n")
    else:
        terminal.stdout_console().print(catalog.workloads_table(shown, origins))
    for line in broken:
        _echo_err(f"asyncbench: warning: {line}")


@main.command(context_settings=CONTEXT)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def devices(fmt: str) -> None:
    """Show every backend × device, usable or not, with the reason when not.

    This imports the installed frameworks to ask them what they see.
    """
    import dataclasses
    import json

    from asyncbench.backends import BACKENDS, DeviceStatus, get_backend
    from asyncbench.report import catalog, terminal

    statuses: list[DeviceStatus] = []
    for name in BACKENDS:
        backend = get_backend(name)
        reason = backend.unavailable_reason()
        statuses += [DeviceStatus(name, "*", False, reason)] if reason else list(backend.probe())
    if fmt == "json":
        _stdout(json.dumps([dataclasses.asdict(s) for s in statuses], indent=1) + "\n")
    else:
        terminal.stdout_console().print(catalog.devices_table(statuses))


@main.command(context_settings=CONTEXT)
@click.argument("configs", nargs=-1, required=True, type=click.Path(dir_okay=False))
def validate(configs: tuple[str, ...]) -> None:
    """Check CONFIG files without running anything; exit 2 if any is invalid."""
    from asyncbench.spec import config

    failed = False
    for path in configs:
        try:
            loaded = config.load(path)
        except InputError as error:
            _report_input_error(error)
            failed = True
            continue
        click.echo(f"{path}: ok ({len(loaded.experiments)} experiment(s))")
    sys.exit(EXIT_INPUT if failed else EXIT_OK)


@main.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench record results/*.json                       CI artifacts, files from other machines
  asyncbench record r.json --label v1.2 --history postgresql://ci@db/bench
""",
)
@click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--label", metavar="TEXT", callback=_label, help="A label for the recorded runs.")
@_history_option
@_guard
def record(paths: tuple[str, ...], label: str | None, history: str | None) -> None:
    """Record results files in the history store: each file in one transaction, a run recorded once
    (a file recorded again, or a run recorded with `run --record`, is said so and left as it is).

    Every file is read and checked first. Exit 2 for a file that is not a results or `ab` file, or holds a
    field out of its vocabulary, or a store that cannot be opened (nothing recorded), and when the store
    refused a file (the others are still recorded)."""
    from asyncbench.session import recorder

    sys.exit(recorder.record_files(paths, history, label, _echo_err))


@main.command(
    "history",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench history                                   every series, with its change points
  asyncbench history matmul --format json              the matmul cases, for scripts
  asyncbench history --fail-on-regression --max-regression 5%     a CI gate over the history
""",
)
@click.argument("pattern", required=False)
@_history_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when the newest point of a series starts a regression.")
@click.option(
    "--max-regression",
    default="10%",
    show_default=True,
    metavar="PCT",
    callback=_margin,
    help="A change this much slower or less is no regression.",
)
@click.option("--last", default=40, show_default=True, type=click.IntRange(min=1), help="Points shown per series (changes: all).")
@_guard
def history_command(pattern: str | None, history: str | None, fmt: str, fail_on_regression: bool, max_regression: float, last: int) -> None:
    """Each recorded series (a case's quantity on one machine) with where it changed: the run, before → after,
    the ratio with its 95% interval, and the change's p-value (E-divisive means, Apache Otava)."""
    from asyncbench.history import changes, store, target
    from asyncbench.report import history as shown
    from asyncbench.report import terminal
    from asyncbench.session import recorder

    _check_pattern(pattern)
    recorder.require_history(history, "history")
    found = store.open_store(target.resolve(history)).series(pattern, last)
    if fmt == "json":
        _stdout(changes.to_json(found))
    else:
        shown.print_series(found, terminal.stdout_console())
    if not found:
        _echo_err(f"no series{' matching ' + repr(pattern) if pattern else ''} in the history")
        sys.exit(EXIT_GATE)
    hits = changes.regressions(found, max_regression)
    if fail_on_regression and hits:
        for one, change in hits:
            _echo_err(f"regression: {one.case} {one.variant} {one.quantity} on {one.machine}: ×{change.ratio:.3g} at {change.at}")
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
@_history_option
@_guard
def report_command(pattern: str | None, output: str, history: str | None) -> None:
    """Write the history as one self-contained HTML page: a trend chart per case and quantity (machines side by
    side, each point's interval and revision in its tooltip, change points marked), the machines, and the latest
    run's table with its verdicts and timelines. No network needed to open it."""
    from asyncbench.history import store, target
    from asyncbench.report import html
    from asyncbench.results import outputs
    from asyncbench.session import recorder

    _check_pattern(pattern)
    recorder.require_history(history, "report", "plotly")
    outputs.check([("-o", output)], inputs=[("--history", recorder.store_file(history))])
    opened = store.open_store(target.resolve(history))
    found = opened.series(pattern, html.CHART_POINTS)
    if not found:
        _echo_err(f"no series{' matching ' + repr(pattern) if pattern else ''} in the history {opened.target.shown}")
        sys.exit(EXIT_GATE)
    if not outputs.write(output, html.render(found, opened.latest(), opened.recent(html.RECENT_RUNS), opened.target.shown), _echo_err):
        sys.exit(EXIT_ERRORS)
    _echo_err(f"written: {output} ({len(found)} series)")


@main.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench show r.json
  asyncbench show r.json --format markdown >> "$GITHUB_STEP_SUMMARY"
  asyncbench show sweep.json --plot sweep.png
""",
)
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", *_SHOWN]), default="table", show_default=True)
@click.option(
    "--plot", "plot_path", type=click.Path(dir_okay=False), metavar="FILE.png", help="Also draw the swept experiments (needs matplotlib)."
)
@_guard
def show(path: str, fmt: str, plot_path: str | None) -> None:
    """Re-render a results file written by `asyncbench run -o`."""
    from asyncbench.report import terminal, view
    from asyncbench.report.writers import WRITERS
    from asyncbench.results import outputs
    from asyncbench.session import reading

    plot = WRITERS["plot"]
    if plot_path:
        plot.check_destination(plot_path)
    shown = view.build(reading.load_results(path, _echo_err))
    if fmt == "table":
        terminal.print_report(shown, terminal.stdout_console())
    else:
        content = WRITERS[fmt].render(shown, "-")
        _stdout(content if isinstance(content, str) else content.decode())
    if plot_path:
        if not outputs.write(plot_path, plot.render(shown, plot_path), _echo_err):
            sys.exit(EXIT_ERRORS)
        _echo_err(f"written: {plot_path}")


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
say which); INCONCLUSIVE when it reaches across 1 + margin or there is none.
The rows share a 1% false-alarm rate (Bonferroni). Exit 1 when some case is
SLOWER or INCONCLUSIVE (unless --allow-inconclusive), or ran ok in the
baseline and not now; exit 2 when the two files have no case in common.
The intervals see the noise within each run, not the machine changing speed
between runs: on a shared machine gate with `asyncbench ab` instead.
""",
)
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("current", type=click.Path(dir_okay=False))
@click.option("--max-regression", default="10%", show_default=True, metavar="PCT", callback=_margin, help="How much slower still passes.")
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
    help="An INCONCLUSIVE row (its interval reaches across the margin, or too few samples for one) does not fail the gate.",
)
@_guard
def compare_command(baseline: str, current: str, max_regression: float, clock: str, fmt: str, allow_inconclusive: bool) -> None:
    """Compare CURRENT results with BASELINE, case by case (matched by id)."""
    from asyncbench.report import compared, markdown, terminal
    from asyncbench.session import reading
    from asyncbench.verdicts import compare

    base, now = reading.load_results(baseline, _echo_err), reading.load_results(current, _echo_err)
    comparison = compare.compare(base, now, max_regression, clock, allow_inconclusive=allow_inconclusive)
    if fmt == "json":
        _stdout(compare.dumps(comparison))
    elif fmt == "markdown":
        _stdout("\n".join(markdown.comparison_lines(compared.comparison(comparison))) + "\n")
    else:
        terminal.print_comparison(compared.comparison(comparison), terminal.stdout_console())
    sys.exit(EXIT_GATE if comparison.failed else EXIT_OK)


@main.command(
    "ab",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench ab configs/ab-gate.yaml --base origin/main             this branch's working tree against main
  asyncbench ab configs/ab-gate.yaml --base v1.2 --head v1.3 -o ab.json --markdown comment.md
  asyncbench ab -w matmul -b torch --base-python ~/venvs/torch212/bin/python      torch 2.12 against this one
  asyncbench ab -w matmul -b numpy --base-env OPENBLAS_NUM_THREADS=1 --head-env OPENBLAS_NUM_THREADS=2
\b
Both sides run in one run, in worker processes started alike; in every
round each variant is sampled once on each side, in a random order, and the
side that is not measuring is frozen (SIGSTOP) so it cannot compete. Rounds
come in blocks, each a fresh pair of processes (a process carries a bias of
its own); each block gives one paired ratio head/base per variant (and per
rate metric); a signed-rank interval over the blocks decides. The
question is one-sided: SLOWER when the whole interval lies above
1 + margin, a pass (SAME, FASTER or NOT SLOWER) when it lies below,
INCONCLUSIVE otherwise. The gate's time (--gate-time) goes to the cases by
how far each is from a decision; an undecided case says how much more it
needs. All verdicts share one false-alarm rate (1%), split over cases,
verdicts and looks. Exit 1 on SLOWER, INCONCLUSIVE (unless
--allow-inconclusive), a result that fails its verification, a case ok on
base and not on head, or nothing compared; 3 when a case errored; 2 for bad
input, before anything runs.
""",
)
@_selection_options
@click.option("--base", "base_rev", metavar="REV", help="The base side's git revision of the config's repository.")
@click.option("--head", "head_rev", metavar="REV", help="The head side's revision [default: the working tree].")
@click.option("--base-python", type=click.Path(dir_okay=False), metavar="PATH", help="Run the base side under this Python.")
@click.option(
    "--base-env", multiple=True, metavar="KEY=VALUE", callback=_variables, help="A variable set on the base side only (repeatable)."
)
@click.option(
    "--head-env", multiple=True, metavar="KEY=VALUE", callback=_variables, help="A variable set on the head side only (repeatable)."
)
@click.option(
    "--max-regression", default="5%", show_default=True, metavar="PCT", callback=_margin, help="The margin: how much slower still passes."
)
@click.option("--allow-inconclusive", is_flag=True, help="An INCONCLUSIVE verdict does not fail the gate.")
@click.option(
    "--gate-time",
    default="120s",
    show_default=True,
    metavar="DURATION",
    callback=_gate_time,
    help="The whole gate's measuring time (90s, 2m), shared by its cases.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="FILE", help="Write the comparison as JSON.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False), metavar="FILE", help="Write a pull-request comment.")
@click.option("--no-progress", is_flag=True, help="No progress display on stderr.")
@_guard
def ab_command(
    configs: tuple[str, ...],
    workloads: tuple[str, ...],
    devices: tuple[str, ...],
    backends: tuple[str, ...],
    sets: tuple[str, ...],
    quick: bool,
    base_rev: str | None,
    head_rev: str | None,
    base_python: str | None,
    base_env: dict[str, str],
    head_env: dict[str, str],
    max_regression: float,
    allow_inconclusive: bool,
    gate_time: float,
    output: str | None,
    markdown_path: str | None,
    no_progress: bool,
) -> None:
    """Is head slower than base? Both measured in one run, paired round by round."""
    from asyncbench.report import paired, terminal
    from asyncbench.session import paired as ab
    from asyncbench.session.requests import Selection

    request = ab.ABRequest(
        selection=Selection(configs, workloads, devices, backends, sets, quick),
        base=base_rev,
        head=head_rev,
        base_python=base_python,
        base_env=base_env,
        head_env=head_env,
        max_regression=max_regression,
        allow_inconclusive=allow_inconclusive,
        gate_time_s=gate_time,
        json_path=output,
        markdown_path=markdown_path,
        progress=not no_progress,
    )
    ended = ab.run(request, _echo_err)
    paired.print_view(ended.view, terminal.stdout_console())
    sys.exit(ended.code)
