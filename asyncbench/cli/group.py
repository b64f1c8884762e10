"""The command group `main`, and how the CLI speaks: bad input as one line per mistake and exit 2 (click's usage
errors too), text for people on stderr, text for programs on stdout."""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, NoReturn

import click

from asyncbench.errors import EXIT_INPUT, InputError, each_error
from asyncbench.version import __version__

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def report_input_error(error: InputError) -> None:
    """Each mistake on a line of its own (a config's every mistake, in line order)."""
    for one in each_error(error):
        echo_err(f"asyncbench: error: {one}")


def usage_line(error: click.UsageError) -> str:
    """click's usage error (a bad option value, an unknown option, a missing argument) as the tool says its own
    mistakes: one line, naming the command and where its help is, "run: invalid value for '--threads': 0 is not in
    the range x>=1 (asyncbench run --help)", rather than click's usage, hint and `Error:` lines."""
    names = []
    ctx = error.ctx
    while ctx is not None and ctx.parent is not None:  # the root's own name is the program's (CliRunner's "main")
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    command = " ".join(reversed(names))
    message = " ".join(error.format_message().split()).removesuffix(".")
    if message[:1].isupper() and message[1:2].islower():  # click's "Invalid value ...": a sentence's start, not a name
        message = message[0].lower() + message[1:]
    where = f"(asyncbench {command} --help)" if command else "(asyncbench --help)"
    return f"{command}: {message} {where}" if command else f"{message} {where}"


def report_usage_error(error: click.UsageError) -> NoReturn:
    """One line and click's exit status (2); a command run without its arguments still shows its help, as click
    does (NoArgsIsHelpError: the help is the answer, not a mistake)."""
    if isinstance(error, click.exceptions.NoArgsIsHelpError):
        error.show()
    else:
        echo_err(f"asyncbench: error: {usage_line(error)}")
    sys.exit(error.exit_code)


def guard(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn InputError into one line per mistake on stderr and exit 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except InputError as error:
            report_input_error(error)
            sys.exit(EXIT_INPUT)

    return wrapper


# Each command's line in `asyncbench --help` and in the generated reference, whole: click would cut a docstring's
# first sentence at the terminal's width ("paired..."), and the reference takes its first line, which can stop
# mid-sentence. A command without a line here fails the tests (tests/e2e/test_cli.py).
SUMMARIES = {
    "run": "Run experiments from CONFIG files (default: the built-in suite).",
    "show": "Re-render a results file (run -o) or an ab file (ab -o).",
    "compare": "Compare CURRENT results with BASELINE, case by case.",
    "ab": "Is head slower than base? Both measured in one run.",
    "list": "Describe every workload: params, variants and metrics.",
    "devices": "Every backend × device, usable or not, and why not.",
    "validate": "Check CONFIG files without running anything.",
    "schema": "Print a config's JSON Schema, for editors' completion.",
    "gather": "Gather a submission's jobs into one report, as run would.",
    "merge": "Merge a plan's shards (run --shard I/N) into one report.",
    "record": "Record results files in the history store.",
    "history": "Each recorded series and where it changed.",
    "report": "Write the history as one self-contained HTML page.",
}


class Commands(click.Group):
    """The command group: an InputError raised while a command's options are read (a callback below parsing a
    margin, a KEY=VALUE, a duration) is one line per mistake and exit 2, as one raised by the command is (guard).
    Every command runs under the one interrupt policy (session.interrupts.ending): Ctrl-C → 130, SIGTERM → 143, one
    line, its outputs whole."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Each command with its whole line from SUMMARIES (its --help keeps the docstring)."""
        cmd.short_help = SUMMARIES.get(name or cmd.name or "", cmd.short_help)
        super().add_command(cmd, name)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any) -> click.Context:
        """The group's own options read (`asyncbench --bogus`): a usage error is one line (report_usage_error).

        Under the interrupt policy too: a Ctrl-C while they are read (before `invoke`, whose policy covers the command)
        would reach click's own handler, "Aborted!" and exit 1, which reads as a failed check."""
        from asyncbench.session import interrupts

        with interrupts.ending(echo_err):
            try:
                return super().make_context(info_name, args, parent, **extra)
            except click.UsageError as error:
                report_usage_error(error)

    def invoke(self, ctx: click.Context) -> Any:
        from asyncbench.session import interrupts

        with interrupts.ending(echo_err):
            try:
                return super().invoke(ctx)
            except InputError as error:
                report_input_error(error)
                sys.exit(EXIT_INPUT)
            except click.UsageError as error:  # a command's options and arguments are read here (its make_context)
                report_usage_error(error)


def echo_err(text: str) -> None:
    """A line for people on stderr; a name in it is data, its control characters shown (report.escaping), never obeyed."""
    from asyncbench.report.escaping import visible

    click.echo(visible(text), err=True)


def stdout(text: str) -> None:
    """Text for another program (JSON, CSV, markdown) on stdout as it is; a reader that stops early is no failure."""
    from asyncbench.report.terminal import write_stdout

    write_stdout(text)


@click.group(
    cls=Commands,
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
