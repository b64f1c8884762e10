"""The console script and `python -m asyncbench`: the command line, with a Ctrl-C in its own import ended as one.

Importing the CLI (click, rich, every command) takes a moment; a Ctrl-C in it is Python's KeyboardInterrupt with its
traceback, before any of the interrupt policy (session.interrupts) is in place. Here it is the policy's exit code and
one line; nothing has been opened yet, so nothing is left to write. SIGTERM there has its default action (143 in a
shell), as the policy's own code would be.
"""

from __future__ import annotations

import sys

from asyncbench.errors import EXIT_INTERRUPTED


def main() -> None:
    """Import the command group, then run it (it exits with the command's code)."""
    try:
        from asyncbench.cli import main as commands
    except KeyboardInterrupt:
        sys.stderr.write("interrupted (Ctrl-C): stopped before the command began; nothing written\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
    commands()
