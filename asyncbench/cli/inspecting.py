"""`list`, `devices`, `validate` and `show`: what is there to run, what can run here, whether a config is
valid, and a saved results file rendered again. None of them runs a case."""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING, Any

import click

from asyncbench.cli.group import CONTEXT, echo_err, guard, main, report_input_error, stdout
from asyncbench.cli.options import SHOWN
from asyncbench.errors import EXIT_ERRORS, EXIT_GATE, EXIT_INPUT, EXIT_OK, InputError

if TYPE_CHECKING:
    from asyncbench.results.schema import Report


@main.command("list", context_settings=CONTEXT)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def list_workloads(fmt: str) -> None:
    """Describe every workload: what it measures, its params (default / quick), variants and metrics; then the
    suites shipped in the package, which `asyncbench run NAME` runs without a clone.

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
        stdout(catalog.workloads_json(shown, origins) + "\n")
    else:
        terminal.stdout_console().print(catalog.workloads_table(shown, origins))
        stdout(_suites_listed())
    for line in broken:
        echo_err(f"asyncbench: warning: {line}")


def _suites_listed() -> str:
    """The packaged suites, a line each: its name and what it runs (spec.suites)."""
    from asyncbench.spec import suites

    names = suites.names()
    width = max(map(len, names))
    lines = ["suites (asyncbench run NAME, e.g. asyncbench run async-computation; a file of that name wins):"]
    return "\n".join([*lines, *(f"  {name:<{width}}  {suites.summary(name)}" for name in names)]) + "\n"


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
        stdout(json.dumps([dataclasses.asdict(s) for s in statuses], indent=1) + "\n")
    else:
        terminal.stdout_console().print(catalog.devices_table(statuses))


@main.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench validate bench.yaml                 every mistake of the file at once, one line each (file:line: key)
  asyncbench validate configs/*.yaml             several files: exit 2 if any is invalid
  asyncbench schema -o asyncbench.schema.json    what an editor checks as you type (validate checks more)
""",
)
@click.argument("configs", nargs=-1, required=True, type=click.Path(dir_okay=False))
def validate(configs: tuple[str, ...]) -> None:
    """Check CONFIG files without running anything; exit 2 if any is invalid."""
    from asyncbench.report.escaping import visible
    from asyncbench.spec import config
    from asyncbench.verdicts import bound_checks, checks

    failed = False
    for path in configs:
        try:
            loaded = config.load(path, validating=True)  # what a run would find only as it ran it, too
        except InputError as error:
            report_input_error(error)
            failed = True
            continue
        # a check on what bounds the step makes its cases take perturbation rounds: said, as it lengthens them
        bounded = sum(bound_checks.is_bound_check(check) for e in loaded.experiments for check in e.expect)
        taking = f"; {bounded} check(s) on what bounds the step: their cases take perturbation rounds, as --bound" if bounded else ""
        # so does a check on where the step waits: its cases take census rounds
        counted = sum(checks.asks_census((check,)) for e in loaded.experiments for check in e.expect)
        taking += (
            f"; {counted} check(s) on where the step waits: their cases take census rounds, as --syncs "
            "(none on a backend that runs synchronously: nothing there waits for a device)"
            if counted
            else ""
        )
        click.echo(visible(f"{path}: ok ({len(loaded.experiments)} experiment(s){taking})"))  # a file's name is data (report.escaping)
    sys.exit(EXIT_INPUT if failed else EXIT_OK)


@main.command(
    "schema",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench schema -o asyncbench.schema.json
      then as a config's first line:  # yaml-language-server: $schema=asyncbench.schema.json
  asyncbench schema | python -m json.tool --sort-keys      the schema on stdout
""",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="FILE", help="Write the schema to FILE, not stdout.")
@guard
def config_schema(output: str | None) -> None:
    """Print the JSON Schema (draft 2020-12) of a config, for editors that complete and check YAML.

    yaml-language-server (VS Code's YAML extension and others) reads it from a
    modeline or its settings (docs: configs). It is built from the tables
    `validate` checks with: every key, its type, choices and bounds, and each
    built-in workload's params; `validate` also checks what a schema cannot
    (rules across keys, a file's workload, a check's metric).
    """
    import json

    from asyncbench.results import outputs
    from asyncbench.spec import json_schema

    text = json.dumps(json_schema.build(), indent=2) + "\n"
    if output is None:
        stdout(text)
        return
    outputs.check([("-o", output)])
    if not outputs.write(output, text, echo_err):
        sys.exit(EXIT_ERRORS)
    echo_err(f"written: {output}")


@main.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  asyncbench show r.json
  asyncbench show r.json --format markdown >> "$GITHUB_STEP_SUMMARY"
  asyncbench show knee.json --plot knee.png
  asyncbench show ab.json                       an `ab -o` file: its verdicts as `ab` printed them
  asyncbench show r.json --format junit > junit.xml      its expect: checks as JUnit XML tests (ab.json: its verdicts)
  asyncbench show r.json --format bmf > bmf.json         every measure as Bencher Metric Format
""",
)
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", *SHOWN]), default="table", show_default=True)
@click.option(
    "--plot", "plot_path", type=click.Path(dir_okay=False), metavar="FILE.png", help="Also draw the swept experiments (needs matplotlib)."
)
@click.option(
    "--allow-inconclusive",
    is_flag=True,
    help="With --format junit: an inconclusive check is a skipped test, not a failure, as under the gate's "
    "--allow-inconclusive (the table's closing lines of checks that fail the gate leave it out too; an `ab` file keeps its "
    "own setting unless this is given). E.g. show r.json --format junit --allow-inconclusive",
)
@guard
def show(path: str, fmt: str, plot_path: str | None, allow_inconclusive: bool) -> None:
    """Re-render a results file written by `asyncbench run -o` (or `asyncbench ab -o`).

    Exit 0: shown, whatever its checks or verdicts say (the gate's code is
    said under the table, as `run` or `ab` exited). Exit 1: the file holds no
    case (a run interrupted before its first case finished): nothing was
    measured, said on stderr; shown all the same, its JUnit a failing test.
    Exit 2: bad input (a file that cannot be read, a format it has not)."""
    from asyncbench.report.writers import WRITERS
    from asyncbench.results.ab_report import ABReport
    from asyncbench.session import reading

    plot = WRITERS["plot"]
    if plot_path:
        plot.check_destination(plot_path)  # what --plot needs (matplotlib, a writable file) said before any reading
    loaded = reading.load_any(path, echo_err)
    # a file that holds no case measured nothing: shown, then one line on stderr and exit 1, as its run exited
    empty = reading.held_nothing(path, loaded)
    if isinstance(loaded, ABReport):  # its own outcome already says "nothing was compared" (verdicts.paired)
        _show_ab(dataclasses.replace(loaded, allow_inconclusive=True) if allow_inconclusive else loaded, fmt, plot_path)
    else:
        _show_results(loaded, fmt, plot_path, allow_inconclusive, empty)
    if empty:
        echo_err(empty)
        sys.exit(EXIT_GATE)


def _show_results(loaded: Report, fmt: str, plot_path: str | None, allow_inconclusive: bool, empty: str | None) -> None:
    """A results file, as `run` printed it (a table, with the checks that fail the gate and why) or in a writer's
    format; `empty`: why it measured nothing (session.reading.held_nothing), its outcome in every format that
    carries one, a JUnit file's failing test among them."""
    from asyncbench.report import terminal, view
    from asyncbench.report.writers import WRITERS
    from asyncbench.results import outputs
    from asyncbench.verdicts import outcome

    plot = WRITERS["plot"]
    # judged only where a format says what the gate would: a JUnit test per check, INCONCLUSIVE as allowed or not
    judged = outcome.judge(loaded, allow_inconclusive=True) if allow_inconclusive and fmt == "junit" else None
    if fmt in ("table", "markdown"):  # the lines `run` printed under its report: each check that fails the gate, and why
        judged = outcome.judge(loaded, allow_inconclusive=allow_inconclusive)
    if empty:  # the code is `show`'s own exit, not the gate's read back
        judged = outcome.held_nothing(judged, empty)
    shown = view.build(loaded, None, judged)
    if shown.outcome is not None and not empty:  # read back: `show` exits 0 itself, the code is the gate's on these checks
        shown = dataclasses.replace(shown, outcome=dataclasses.replace(shown.outcome, read_back=True))
    if plot_path:  # a file with nothing to plot is refused before its table is printed
        from asyncbench.report import plot as plotting

        plotting.check_drawable(shown)
    if fmt == "table":  # an empty file's one reason is `show`'s line on stderr, not said twice on a terminal
        terminal.print_report(shown, terminal.stdout_console(), with_outcome=not empty)
    else:
        content = WRITERS[fmt].render(shown, "-")
        stdout(content if isinstance(content, str) else content.decode())
    if plot_path:
        if not outputs.write(plot_path, plot.render(shown, plot_path), echo_err):
            sys.exit(EXIT_ERRORS)
        echo_err(f"written: {plot_path}")


#: the formats an `ab` file is shown in: its table, its pull-request comment, its JSON (as `ab -o` writes it), its
#: paired ratios as Bencher Metric Format and its verdicts as JUnit XML (as `ab --bmf`, `--junit` write them)
AB_SHOWN = ("table", "markdown", "json", "bmf", "junit")


def _show_ab(report: Any, fmt: str, plot_path: str | None) -> None:
    """An `ab` file's comparison, as `ab` printed it (report.paired), its pull-request comment, or its JSON."""
    from asyncbench.report import paired, terminal

    if plot_path:
        raise InputError("--plot draws a run's swept experiments; an `ab` file has none (show it as a table or markdown)")
    if fmt not in AB_SHOWN:
        raise InputError(f"--format {fmt}: an `ab` file is shown as {', '.join(AB_SHOWN)}")
    if fmt == "json":
        stdout(report.to_json())
        return
    if fmt in ("bmf", "junit"):
        from asyncbench.report import bmf, junit

        stdout(bmf.ab_bmf(report) if fmt == "bmf" else junit.ab_junit(report))
        return
    view = paired.shown_again(report)
    if fmt == "markdown":
        stdout(paired.markdown(view))
    else:
        paired.print_view(view, terminal.stdout_console(), again=True)
