"""Issue 53, item 10 (c): torch's sync debug mode is process-wide, and Python's warning hook is too, so a synchronizing
call on another thread (a data loader's, a partner's worker) warned into the census's witness and was credited to the
call the measured thread had open. Only warnings raised on the thread that entered `debug_warnings` reach the witness;
another thread's are neither credited nor shown (the mode is the census's, not the user's).

Against the model of torch's warning (tests/backends/torch_model.py): no CUDA here."""

from __future__ import annotations

import inspect
import threading
import types
import warnings

from asyncbench.backends import torch_syncs
from tests.backends import torch_model


def _warn_on_a_second_thread() -> None:
    """torch's warning raised by a synchronizing call on a thread of its own, joined before returning."""
    thread = threading.Thread(target=torch_model.spin_op, args=(0.0,), name="asyncbench-test-other")
    thread.start()
    thread.join()


def test_a_warning_from_another_thread_is_not_credited_to_the_measured_thread():
    fake = types.SimpleNamespace(cuda=torch_model.Cuda())
    torch_model.CUDA.mode = 0
    seen: list[tuple[str, int, int]] = []

    def witness(frame: types.FrameType, where: str) -> None:
        seen.append((frame.f_code.co_name, frame.f_lineno, threading.get_ident()))

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")
        with torch_syncs.debug_warnings(fake, witness):
            torch_model.CUDA.mode = 1  # the model's op warns in warn mode (debug_warnings turned the fake's on)
            try:
                _warn_on_a_second_thread()
                assert seen == []  # before: the other thread's frame reached the witness, and the census marked our call
                torch_model.spin_op(0.0)
                line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
            finally:
                torch_model.CUDA.mode = 0
    name = test_a_warning_from_another_thread_is_not_credited_to_the_measured_thread.__name__
    assert seen == [(name, line, threading.get_ident())]  # the measured thread's own warning still is
    assert [str(w.message) for w in shown] == []  # the other thread's was not shown either: the mode is the census's


def test_a_debug_context_entered_on_another_thread_takes_only_that_thread_s_warnings():
    """The thread measured is the one that entered the context, not the main thread."""
    fake = types.SimpleNamespace(cuda=torch_model.Cuda())
    seen: list[int] = []
    done = threading.Event()
    errors: list[BaseException] = []

    def measured() -> None:
        try:
            with torch_syncs.debug_warnings(fake, lambda frame, where: seen.append(threading.get_ident())):
                torch_model.CUDA.mode = 1
                try:
                    torch_model.spin_op(0.0)  # this thread's: credited
                    done.set()
                finally:
                    torch_model.CUDA.mode = 0
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=measured, name="asyncbench-test-measured")
    thread.start()
    thread.join()
    assert errors == []
    assert done.is_set()
    assert seen == [thread.ident]
