"""Writing a file whole or not at all: what every output asyncbench writes goes through.

A file is written to a temporary file of its own beside the target, flushed
to disk and renamed over the target, so a reader sees the old complete file
or the new complete one, never half of one, also on Ctrl-C, SIGTERM or a
full disk (atomic_write). A device or a FIFO (/dev/null, /dev/stdout) is
written as it is, never replaced (is_special). check_writable says before a
long run that its output cannot be written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Iterator

from asyncbench.errors import InputError


def is_special(path: str | Path) -> bool:
    """Whether `path` names something that is there and is no regular file (following links): a device such as
    /dev/null, a FIFO, a socket, /dev/stdout. Such an output is written as it is, never replaced: renaming a new
    file over /dev/null, as root, would have turned the machine's /dev/null into a plain file."""
    path = Path(path)
    return path.exists() and not path.is_file() and not path.is_dir()


def atomic_write(path: str | Path, content: str | bytes) -> None:
    """Write `content` to `path` so that readers see the old file or the new one, never a mix. A link is written
    through (the file it names is replaced, never the link); a device or a FIFO (is_special) is written to as it is.
    However the write ends (a full disk, Ctrl-C, SIGTERM raised by session.interrupts) the temporary file goes with it."""
    path = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    if is_special(path):
        with open(path, "wb") as handle:
            handle.write(data)
        return
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    with beside(path, "tmp") as temporary:
        # mode "x": a file of its own, made with open()'s 0666 less the umask (mkstemp's 0600 hid results from a team)
        with open(temporary, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)


#: random bytes in a temporary file's name: 64 bits, so that two writers beside one target never pick one name
NAME_RANDOM_BYTES = 8


@contextlib.contextmanager
def beside(path: Path, kind: str) -> Iterator[Path]:
    """The name of a hidden file of this process's own beside `path` (`.NAME.RANDOM.KIND`), removed when the block
    ends however it ends, where the block has not renamed it away. Named before it is made, so that an interrupt the
    moment after it is made (Ctrl-C's KeyboardInterrupt, or SIGTERM raised by session.interrupts, in the middle of
    making it) still knows what to remove: nothing is left beside the target."""
    name = path.parent / f".{path.name}.{secrets.token_hex(NAME_RANDOM_BYTES)}.{kind}"
    try:
        yield name
    finally:
        with contextlib.suppress(OSError):  # renamed over the target, or never made
            os.unlink(name)


def check_writable(path: str | Path) -> None:
    """Fail now, not after a long run, if `path` cannot be written (InputError)."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a directory; expected a file path for the results", location=str(path))
    if is_special(path):  # /dev/null, /dev/stdout, a FIFO: written as they are (atomic_write), so they need only be writable
        if not os.access(path, os.W_OK):
            raise InputError("cannot be written", location=str(path))
        return
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"directory {str(parent)!r} does not exist", location=str(path))
    with beside(path, "probe") as probe:
        try:
            open(probe, "xb").close()
        except OSError as exc:
            raise InputError(f"cannot write here: {exc.strerror}", location=str(path)) from None
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError("the existing file is not writable", location=str(path))
