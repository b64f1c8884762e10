"""How every command ends when it is told to stop: one policy for Ctrl-C and SIGTERM, for every command.

SIGTERM raises `Terminated` wherever the command is, so that it unwinds as
Ctrl-C's KeyboardInterrupt does. While the cases of run, gather and ab run
(`Interrupts.running`), that tears down their workers and cancels the jobs
they submitted; the work ends there, and the command saves what finished
and exits 130 (Ctrl-C) or 143 (SIGTERM). A second SIGTERM while that is
saved is ignored: a supervisor that repeats its SIGTERM (systemd, a CI
runner's cancel, `timeout`) must not cut the only copy of the finished
cases short. After the save, SIGTERM's handler is the one from before.

Everywhere else in a command (`ending`, around each command: merge, report
and record write, as run does at its end) the interrupt ends the command
where it is, with one line and the same exit codes. What it was writing is
left whole as it unwinds: a file is written to a temporary one renamed over
it (results.writing.atomic_write removes the temporary one), a store records
in a transaction, rolled back.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from typing import Any, Callable, Iterator

from asyncbench.errors import EXIT_INTERRUPTED, EXIT_TERMINATED


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever the run is, so that it ends as Ctrl-C does: finished cases saved, workers torn down."""


class Interrupts:
    """One command's stop: `running()` around the work, then `saving()` around the save of what finished.

    `code` is None when the work ended by itself, else the exit code to end with (EXIT_INTERRUPTED or
    EXIT_TERMINATED).
    """

    def __init__(self) -> None:
        self.code: int | None = None
        self._previous: Any = None
        self._previous_int: Any = None
        self._installed = False
        #: the exit code of a signal that arrived in the work, whatever it became on its way up: one raised while a C
        #: extension initialised itself (scipy.stats, imported when a change point is first sought) reaches the
        #: command as "ImportError: initialization failed", and must still end it as the signal does
        self._received: int | None = None
        self._previous_unraisable: Any = None

    def _unraisable(self, unraisable: Any) -> None:
        """Where Python runs code that cannot raise (a weakref's callback: an import's module lock freed), a signal's
        exception raised there was printed as 'Exception ignored in … Traceback' (a CI run's SIGTERM in `merge`) and
        went no further. Ours is noted (`_received`) and the command ends by it (`running`): nothing to print."""
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and self._received is not None:
            return
        self._previous_unraisable(unraisable)

    def _on_term(self, signum: int, frame: Any) -> None:
        self._received = EXIT_TERMINATED
        raise Terminated()

    def _on_int(self, signum: int, frame: Any) -> None:
        self._received = EXIT_INTERRUPTED
        raise KeyboardInterrupt()

    @property
    def interrupted(self) -> bool:
        return self.code is not None

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """The work: SIGTERM raises Terminated in it; Ctrl-C or SIGTERM ends it (`code` says which), SIGTERM ignored
        from then until `saving()` ends. Any other exception goes on, SIGTERM's handler restored."""
        self._previous, self._installed = signal.signal(signal.SIGTERM, self._on_term), True
        self._previous_unraisable, sys.unraisablehook = sys.unraisablehook, self._unraisable
        # Ctrl-C as Python's own handler raises it, noted on the way (left alone where it is ignored or someone's own)
        self._previous_int = signal.getsignal(signal.SIGINT)
        if self._previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, self._on_int)
        try:
            yield
        except KeyboardInterrupt as stop:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the save short
            self.code = EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED
        except BaseException:
            if self._received is None:
                self._restore()
                raise
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the signal, turned into another exception on its way up
            self.code = self._received
        else:
            if self._received is None:
                self._restore()
            else:  # the signal's exception was swallowed where it was raised (`_unraisable`): it ends the command still
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                self.code = self._received

    @contextlib.contextmanager
    def saving(self) -> Iterator[None]:
        """The save of what finished; SIGTERM's handler from before the work is back after it."""
        try:
            yield
        finally:
            self._restore()

    def _restore(self) -> None:
        if self._installed:  # None: a handler not set from Python, which Python cannot put back; the default then
            signal.signal(signal.SIGTERM, signal.SIG_DFL if self._previous is None else self._previous)
            sys.unraisablehook = self._previous_unraisable
            if self._previous_int is signal.default_int_handler:
                signal.signal(signal.SIGINT, signal.default_int_handler)
            self._installed = False


@contextlib.contextmanager
def ending(say: Callable[[str], None]) -> Iterator[None]:
    """A whole command under the policy: Ctrl-C or SIGTERM that reaches it outside a place's `running()` (which saves
    what finished and says so itself) ends it with one line through `say` and SystemExit 130 or 143, never click's
    "Aborted!" and exit 1, which would read as a failed check. Its files and its store are whole as it unwinds (see
    the module's docstring). Called off the main thread (the CLI driven from a thread), where Python sets no signal
    handler, it leaves signals as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    interrupts = Interrupts()
    with interrupts.running():
        yield
    if interrupts.code is None:
        return
    with interrupts.saving():  # SIGTERM ignored until the line is said, then its handler from before
        name = "SIGTERM" if interrupts.code == EXIT_TERMINATED else "Ctrl-C"
        say(f"interrupted ({name}): stopped; each output is as it was or written whole, nothing recorded in part")
    raise SystemExit(interrupts.code)
