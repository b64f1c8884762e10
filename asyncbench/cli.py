"""The click layer: parse → load config → run → save → render → exit code.

Exit codes (errors.py): 0 all good · 1 a gate failed (a check failed, was
inconclusive or not measured; a regression; nothing measured; --strict and
a skip) · 2 bad input, one clear line, never a traceback · 3 some cases
errored while the rest ran and were saved · 130/143 interrupted, what
finished is saved. Modules beyond click are imported inside the commands
that need them, so `--help` starts fast.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import signal
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterator

import click

from asyncbench import __version__
from asyncbench.errors import EXIT_GATE, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, InputError

if TYPE_CHECKING:
    from asyncbench.verdicts import compare
    from asyncbench.spec import config
    from asyncbench.verdicts import outcome
    from asyncbench.results.model import Report, Result


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever the run is, so that it ends as Ctrl-C does: finished cases saved, workers torn down."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _report_input_error(error: InputError) -> None:
    click.echo(f"asyncbench: error: {error}", err=True)


def _guard(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn InputError into one line on stderr and exit 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except InputError as error:
            _report_input_error(error)
            sys.exit(EXIT_INPUT)

    return wrapper


@contextlib.contextmanager
def _reader_may_leave() -> Iterator[None]:
    """Printing into a pipe whose reader stopped (`| head`) is not a failure: the rest of the output goes nowhere,
    and the exit code stays the run's own, not 1 from a BrokenPipeError (the recipe of Python's signal docs)."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@click.group(
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
""",
)
@click.version_option(__version__, "-V", "--version", prog_name="asyncbench")
def main() -> None:
    """Measure asynchronous execution in array frameworks (PyTorch, CuPy, NumPy, JAX, MXNet).

    Every sample has three clocks: issue (until Python gets control back),
    done (until the device finished) and device (CUDA events). Their gap is
    what a timer without a sync gets wrong. JAX and MXNet show it on a CPU.
    """


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
""",
)
@click.argument("configs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-w", "--workload", "workloads", multiple=True, metavar="NAME", help="Only these workloads (with no CONFIG: run them with defaults).")
@click.option("-d", "--device", "devices", multiple=True, metavar="DEV", help="cpu | cuda | cuda:N | auto (overrides the config).")
@click.option("-b", "--backend", "backends", multiple=True, metavar="NAME", help="numpy | torch | cupy | jax | mxnet (overrides the config).")
@click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE",
    help="Override a param or setting (n_ops=100, sync_async.n_ops=100, max_time_s=2), or sweep a param: n_ops=10,100,1000.",
)
@click.option("--quick", is_flag=True, help="Small sizes and few samples (smoke tests, CI on CPU).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write results as JSON (atomically, after every case).")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False), metavar="FILE", help="Also write the results as markdown (a CI job summary).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), metavar="FILE", help="Also write one CSV row per case and variant.")
@click.option(
    "--github-benchmark", "github_path", type=click.Path(dir_okay=False), metavar="FILE",
    help="Also write median done times as benchmark-tracking JSON (customSmallerIsBetter).",
)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="FILE.png", help="Draw each swept experiment's metrics against the sweep (needs matplotlib).")
@click.option("--baseline", type=click.Path(dir_okay=False), metavar="FILE", help="Compare with an earlier results file; a significant slowdown exits 1.")
@click.option("--max-regression", default="10%", show_default=True, metavar="PCT", help="How much slower than the baseline still passes.")
@click.option("--strict", is_flag=True, help="A skipped case counts as a failure (exit 1).")
@click.option(
    "--allow-inconclusive", is_flag=True,
    help="An inconclusive check (its 95% interval straddles the threshold) does not fail the gate; it is still reported.",
)
@click.option(
    "--in-process", is_flag=True,
    help="Run cases in this process, not in a worker: starts about a second sooner, but timeout_s is not enforced "
    "and a case that crashes or poisons the CUDA context takes the rest of the run with it.",
)
@click.option(
    "--trace", "trace_dir", type=click.Path(file_okay=False), metavar="DIR",
    help="After each case is measured, run every variant once more under its backend's profiler and write a "
    "Chrome-trace timeline per variant into DIR (open in ui.perfetto.dev).",
)
@click.option("--no-progress", is_flag=True, help="No progress display on stderr.")
@_guard
def run(
    configs: tuple[str, ...],
    workloads: tuple[str, ...],
    devices: tuple[str, ...],
    backends: tuple[str, ...],
    sets: tuple[str, ...],
    quick: bool,
    output: str | None,
    markdown_path: str | None,
    csv_path: str | None,
    github_path: str | None,
    plot_path: str | None,
    baseline: str | None,
    max_regression: str,
    strict: bool,
    allow_inconclusive: bool,
    in_process: bool,
    trace_dir: str | None,
    no_progress: bool,
) -> None:
    """Run experiments from CONFIG files (default: the built-in suite) and print the results.

    Each case runs in a worker process, replaced after a case that errored: a
    case that hangs past its timeout_s setting (default 300 s), crashes or
    poisons the CUDA context is an error row and the others still run.

    Exit 1 when an `expect:` check fails, is inconclusive (its 95% interval
    straddles the threshold) or could not be evaluated, when nothing was
    measured, or when a case is significantly slower than --baseline by more
    than --max-regression; 3 when a case errored.
    """
    import io

    from rich.console import Console

    from asyncbench.verdicts import compare

    from asyncbench.measure import distributed

    from asyncbench.verdicts import outcome

    from asyncbench.report import render

    from asyncbench.results import schema as results

    from asyncbench.engine import trace

    _unsaved.clear()
    plan = _load_plan(configs, workloads, devices, backends, sets, quick)
    launched = distributed.torchrun_rank()
    if launched is not None:
        if any(e.workload != "comm_overlap" for e in plan.experiments):
            raise InputError("under torchrun only comm_overlap runs (each rank would run the other workloads on its own): add -w comm_overlap")
        if launched[0] != 0:  # rank 0 reports and writes for everyone
            output = markdown_path = csv_path = github_path = plot_path = baseline = None
            no_progress = True
        in_process = True  # torchrun started this process to be a rank: it is the worker
    exports = Exports(output, markdown_path, csv_path, github_path, plot_path)
    exports.check(plan)
    traces = str(trace.check_directory(trace_dir)) if trace_dir else None
    threshold = compare.parse_threshold(max_regression)
    base_report = results.load(baseline) if baseline else None
    report, stopped_by = _execute(plan, output, progress=not no_progress, isolate=not in_process, trace_dir=traces)
    comparison = compare.compare(base_report, report, threshold) if base_report is not None else None
    judge = functools.partial(outcome.judge, report, strict=strict, allow_inconclusive=allow_inconclusive, comparison=comparison)
    exports.write(report, comparison, judge())
    verdict = judge(unsaved=_unsaved)
    console = render.stdout_console() if launched is None or launched[0] == 0 else Console(file=io.StringIO())
    with _reader_may_leave():
        if comparison is not None:
            from asyncbench.report import comparison_view

            render.print_report(report, console)
            console.print()
            comparison_view.print_comparison(comparison, console)
            render.print_outcome(console, verdict)
        else:
            render.print_report(report, console, verdict if stopped_by is None else None)
    if stopped_by is not None:
        click.echo(f"interrupted: {len(report.results)} finished case(s) kept" + (f" in {output}" if output else ""), err=True)
        sys.exit(stopped_by)
    sys.exit(verdict.code)


@dataclasses.dataclass(frozen=True)
class Exports:
    """The files a run writes besides the terminal output; all checked before anything runs."""

    json_path: str | None = None
    markdown_path: str | None = None
    csv_path: str | None = None
    github_path: str | None = None
    plot_path: str | None = None

    def check(self, plan: config.Config) -> None:
        """Fail now (exit 2), not after a long run, if an output could not be written."""
        from asyncbench.report import plot
        from asyncbench.results import schema as results

        paths = [p for p in dataclasses.astuple(self) if p]
        repeated = sorted({p for p in paths if paths.count(p) > 1})
        if repeated:
            raise InputError(f"the same file is named for two outputs: {', '.join(repeated)}")
        for path in paths:
            results.check_writable(path)
        if self.plot_path:
            plot.check_available(self.plot_path)
            if not any(e.sweep for e in plan.experiments):
                raise InputError("--plot draws sweeps, and no selected experiment has one (sweep: in a config, or --set KEY=V1,V2)")

    def write(self, report: Report, comparison: compare.Comparison | None, verdict: outcome.Outcome) -> None:
        """Write every file; a failure is a line on stderr and counts as unsaved (exit 3)."""
        try:
            self._write(report, comparison, verdict)
        except OSError as exc:
            click.echo(f"asyncbench: error: cannot write an output: {exc.strerror or exc} ({exc.filename or ''})", err=True)
            _unsaved.add(str(exc.filename))

    def _write(self, report: Report, comparison: compare.Comparison | None, verdict: outcome.Outcome) -> None:
        from asyncbench.report import export
        from asyncbench.report import plot
        from asyncbench.report import render
        from asyncbench.results import schema as results

        written = []
        if self.markdown_path:
            results.atomic_write(self.markdown_path, export.markdown(report, comparison, verdict))
            written.append(self.markdown_path)
        if self.csv_path:
            results.atomic_write(self.csv_path, export.csv_text(report))
            written.append(self.csv_path)
        if self.github_path:
            results.atomic_write(self.github_path, export.github_benchmark(report))
            written.append(self.github_path)
        if self.plot_path and any(render.swept_params(group) for _, group in render.by_experiment(report.results)):
            plot.draw(report, self.plot_path)
            written.append(self.plot_path)
        if self.json_path and self.json_path not in _unsaved:
            written.insert(0, self.json_path)
        if written:
            click.echo(f"written: {', '.join(written)}", err=True)


def _load_plan(
    paths: tuple[str, ...],
    workloads: tuple[str, ...],
    devices: tuple[str, ...],
    backends: tuple[str, ...],
    sets: tuple[str, ...],
    quick: bool,
) -> config.Config:
    """One Config from the files given (or the built-in suite, or -w workloads), with CLI overrides."""
    from asyncbench.spec import config
    from asyncbench.spec import overrides

    if paths:
        loaded = [config.load(p) for p in paths]
        names = [e.name for c in loaded for e in c.experiments]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise InputError(f"experiment name(s) {', '.join(duplicated)} appear in more than one config")
        merged = config.Config(
            name="+".join(c.name for c in loaded),
            source=", ".join(c.source for c in loaded),
            experiments=tuple(e for c in loaded for e in c.experiments),
        )
    elif workloads:
        merged = config.for_workloads(list(dict.fromkeys(workloads)))
    else:
        merged = config.default_suite()
    return overrides.apply_overrides(merged, workloads=workloads, backends=backends, devices=devices, sets=sets, quick=quick)


def _execute(plan: config.Config, output: str | None, progress: bool, isolate: bool, trace_dir: str | None = None) -> tuple[Report, int | None]:
    """Run the plan, saving after every case.

    On Ctrl-C (SIGINT) or SIGTERM, save what finished, marked interrupted,
    and return it with the exit code to end with (130 or 143); else None.
    """
    from rich.console import Console

    from asyncbench.engine import environment  # after input is validated: runner may import frameworks

    from asyncbench.report import render

    from asyncbench.results import schema as results

    from asyncbench.engine import runner

    backends_used = [name for e in plan.experiments for name in e.backends]
    report = results.new_report(plan.to_dict(), environment.capture(backends_used))
    finished: list[Result] = []

    def save_partial(result: Result) -> None:
        finished.append(result)
        display.finish(result)
        if output:
            _save_or_warn(dataclasses.replace(report, results=tuple(finished)), output)

    stderr = Console(stderr=True)
    display = render.ProgressDisplay(enabled=progress and stderr.is_terminal, console=stderr)
    previous_handler = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with display:
            runner.run(
                plan, isolate=isolate, trace_dir=trace_dir, on_start=display.start, on_progress=display.update, on_result=save_partial
            )
    except KeyboardInterrupt as stop:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the save short
        interrupted = dataclasses.replace(report, results=tuple(finished), interrupted=True)
        if output:
            _save_or_warn(interrupted, output)
        return interrupted, EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
    return dataclasses.replace(report, results=tuple(finished)), None


_unsaved: set[str] = set()  # outputs that could not be written during this run


def _save_or_warn(report: Report, path: str) -> None:
    """Save atomically; if the disk is full (or gone), say so once and run on: the previous file stays whole."""
    from asyncbench.results import schema as results

    try:
        results.save(report, path)
        _unsaved.discard(path)
    except OSError as exc:
        if path not in _unsaved:
            click.echo(f"asyncbench: warning: cannot save {path}: {exc.strerror or exc}; the previous file is intact, the run goes on", err=True)
        _unsaved.add(path)


@main.command("list", context_settings=CONTEXT)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def list_workloads(fmt: str) -> None:
    """Describe every workload: what it measures, its params (default / quick), variants and metrics.

    Installed plugins (entry point group asyncbench.workloads) are listed after the built-in ones, with
    where they come from; one that cannot be loaded is a line saying why.
    """
    from pathlib import Path

    from asyncbench.report import catalog

    from asyncbench.workloads import plugins

    from asyncbench.report import render
    from asyncbench.errors import InputError
    from asyncbench.workloads import WORKLOADS

    shown = [w for key, w in WORKLOADS.items() if not plugins.is_reference(key)]
    origins, broken = {}, []
    for plugin in plugins.plugins().values():
        try:
            workload = plugins.load(plugins.canonical(plugin.name, Path.cwd()))
        except InputError as exc:
            broken.append(f"plugin {plugin.name!r} ({plugin.distribution}, {plugin.target}) cannot be loaded: {exc.message}")
            continue
        shown.append(workload)
        origins[workload.name] = f"plugin {plugin.name!r}: {plugin.target}, installed by {plugin.distribution}"
    with _reader_may_leave():
        if fmt == "json":
            click.echo(catalog.workloads_json(shown, origins))
        else:
            render.stdout_console().print(catalog.workloads_table(shown, origins))
        for line in broken:
            click.echo(f"asyncbench: warning: {line}", err=True)


@main.command(context_settings=CONTEXT)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def devices(fmt: str) -> None:
    """Show every backend × device, usable or not, with the reason when not.

    This imports the installed frameworks to ask them what they see.
    """
    import json

    from asyncbench.report import catalog

    from asyncbench.report import render
    from asyncbench.backends import BACKENDS, DeviceStatus, get_backend

    statuses: list[DeviceStatus] = []
    for name in BACKENDS:
        backend = get_backend(name)
        reason = backend.unavailable_reason()
        statuses += [DeviceStatus(name, "*", False, reason)] if reason else list(backend.probe())
    if fmt == "json":
        click.echo(json.dumps([dataclasses.asdict(s) for s in statuses], indent=1))
    else:
        render.stdout_console().print(catalog.devices_table(statuses))


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
  asyncbench show r.json
  asyncbench show r.json --format markdown >> "$GITHUB_STEP_SUMMARY"
  asyncbench show sweep.json --plot sweep.png
""",
)
@click.argument("path", type=click.Path(dir_okay=False))
@click.option(
    "--format", "fmt", type=click.Choice(["table", "markdown", "csv", "json", "github-benchmark"]), default="table", show_default=True
)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="FILE.png", help="Also draw the swept experiments (needs matplotlib).")
@_guard
def show(path: str, fmt: str, plot_path: str | None) -> None:
    """Re-render a results file written by `asyncbench run -o`."""
    from asyncbench.report import export
    from asyncbench.report import plot
    from asyncbench.report import render
    from asyncbench.results import schema as results

    report = results.load(path)
    if plot_path:
        plot.check_available(plot_path)
    with _reader_may_leave():
        if fmt == "json":
            click.echo(results.dumps(report), nl=False)
        elif fmt == "markdown":
            click.echo(export.markdown(report), nl=False)
        elif fmt == "csv":
            click.echo(export.csv_text(report), nl=False)
        elif fmt == "github-benchmark":
            click.echo(export.github_benchmark(report), nl=False)
        else:
            render.print_report(report, render.stdout_console())
    if plot_path:
        plot.draw(report, plot_path)
        click.echo(f"written: {plot_path}", err=True)


@main.command(
    "compare",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench compare main.json pr.json
  asyncbench compare main.json pr.json --max-regression 5% --format markdown >> "$GITHUB_STEP_SUMMARY"
\b
Verdicts, per case and variant: SAME (within the threshold), FASTER or SLOWER
(beyond it and significant: Mann-Whitney U on the raw samples, p < 0.01),
INCONCLUSIVE (beyond it, but the samples cannot tell it from noise).
Exit 1 when some case is SLOWER, or ran ok in the baseline and not now;
exit 2 when the two files have no case in common. The p-value sees the noise
within each run, not the machine changing speed between runs: on a shared
machine gate with ratios measured within one run (expect:) instead.
""",
)
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("current", type=click.Path(dir_okay=False))
@click.option("--max-regression", default="10%", show_default=True, metavar="PCT", help="How much slower still passes.")
@click.option("--clock", type=click.Choice(["done_s", "issue_s", "device_s"]), default="done_s", show_default=True, help="Which clock's samples to compare.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table", show_default=True)
@_guard
def compare_command(baseline: str, current: str, max_regression: str, clock: str, fmt: str) -> None:
    """Compare CURRENT results with BASELINE, case by case (matched by id)."""
    from asyncbench.verdicts import compare
    from asyncbench.report import comparison_view
    from asyncbench.report import export
    from asyncbench.report import render
    from asyncbench.results import schema as results

    threshold = compare.parse_threshold(max_regression)
    base_report, current_report = results.load(baseline), results.load(current)
    comparison = compare.compare(base_report, current_report, threshold, clock)
    with _reader_may_leave():
        if fmt == "json":
            click.echo(compare.dumps(comparison), nl=False)
        elif fmt == "markdown":
            click.echo("\n".join(export.comparison_markdown(comparison)) + "\n", nl=False)
        else:
            comparison_view.print_comparison(comparison, render.stdout_console())
    sys.exit(EXIT_GATE if comparison_view.failed(comparison) else EXIT_OK)
