"""session.interrupts: Ctrl-C and SIGTERM end the work with 130 and 143, also where the signal's exception became
another one on its way up (a C extension initialising itself turns it into "ImportError: initialization failed")."""

from __future__ import annotations

import os
import signal
import time

import pytest

from asyncbench.errors import EXIT_INTERRUPTED, EXIT_TERMINATED
from asyncbench.session.interrupts import Interrupts


@pytest.fixture(autouse=True)
def as_started_from_a_terminal():
    """SIGINT with Python's own handler, as in a process a terminal started: a shell that starts the tests in the
    background (`cmd &` without job control) makes them ignore SIGINT, and Interrupts leaves an ignored SIGINT alone."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _signalled_and_turned_into_an_import_error(signum: int) -> None:
    try:
        os.kill(os.getpid(), signum)
        time.sleep(5)  # the handler runs here
    except KeyboardInterrupt:  # Terminated is one too
        raise ImportError("initialization failed") from None  # as CPython reports an extension's failed PyInit


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, EXIT_TERMINATED), (signal.SIGINT, EXIT_INTERRUPTED)])
def test_a_signal_turned_into_another_exception_still_ends_the_work_as_the_signal(signum, code):
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    interrupts = Interrupts()
    with interrupts.running():
        _signalled_and_turned_into_an_import_error(signum)
    assert interrupts.code == code
    with interrupts.saving():
        pass
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_an_exception_with_no_signal_behind_it_goes_on():
    interrupts = Interrupts()
    with pytest.raises(ImportError), interrupts.running():
        raise ImportError("a real one")
    assert interrupts.code is None
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_while_the_group_s_options_are_read_ends_with_130_and_one_line_not_click_s_aborted(monkeypatch, capsys):
    """Before `invoke` (whose policy covers the command) the group reads its own options; a Ctrl-C there reached
    click's handler: "Aborted!" and exit 1, read by CI as a failed check (a CI run's load once put a signal there)."""
    import click

    from asyncbench.cli import main

    def interrupted(self, ctx, args):
        raise KeyboardInterrupt()

    monkeypatch.setattr(click.Group, "parse_args", interrupted)
    with pytest.raises(SystemExit) as ended:
        main.main(["list"], prog_name="asyncbench")
    assert ended.value.code == EXIT_INTERRUPTED
    err = capsys.readouterr().err
    assert "interrupted (Ctrl-C)" in err
    assert "Aborted" not in err


def test_a_ctrl_c_while_the_cli_is_imported_ends_with_130_and_one_line_not_a_traceback(monkeypatch, capsys):
    """The console script imports click, rich and every command before any policy is in place: a Ctrl-C there was
    Python's KeyboardInterrupt traceback."""
    import importlib.abc
    import sys

    from asyncbench import console

    class Interrupted(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "asyncbench.cli":
                raise KeyboardInterrupt()
            return None

    for name in [name for name in sys.modules if name == "asyncbench.cli" or name.startswith("asyncbench.cli.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [Interrupted(), *sys.meta_path])
    with pytest.raises(SystemExit) as ended:
        console.main()
    assert ended.value.code == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "interrupted (Ctrl-C): stopped before the command began; nothing written\n"


def test_a_signal_raised_where_python_cannot_raise_prints_no_traceback_and_still_ends_the_command(capsys):
    """A CI run's SIGTERM landed in a weakref callback of an import's module lock, where an exception cannot
    propagate: Python printed 'Exception ignored in … Traceback' and the work went on. The signal still ends the
    command with its code, and nothing of it is printed."""
    import weakref

    interrupts = Interrupts()
    with interrupts.running():

        class Held:
            pass

        held = Held()
        ref = weakref.ref(held, lambda _: interrupts._on_term(signal.SIGTERM, None))
        del held  # its callback runs now and raises Terminated where Python can only report it
    assert ref() is None
    assert interrupts.code == EXIT_TERMINATED
    assert "Traceback" not in capsys.readouterr().err
    with interrupts.saving():
        pass
    assert signal.getsignal(signal.SIGTERM) is not interrupts._on_term  # put back after the save
