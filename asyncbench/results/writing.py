"""Writing a file whole or not at all: what every output asyncbench writes goes through.

A file is written to a temporary file of its own beside the target, flushed
to disk and renamed over the target, so a reader sees the old complete file
or the new complete one, never half of one, also on Ctrl-C, SIGTERM or a
full disk (atomic_write). A device or a FIFO (/dev/null, /dev/stdout) is
written as it is, never replaced (is_special). A symbolic link is replaced,
never written through: the new file is renamed over the link's own name, so
an output named in a shared folder where someone planted `out.json ->
~/.bashrc` writes out.json and leaves the link's target as it was.
check_writable says before a long run that its output cannot be written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Iterator

from asyncbench.errors import InputError

#: where a link is the system's name for an open stream (/dev/stdout, /dev/fd/1, /proc/self/fd/1): it names what the
#: process writes to, a terminal, a pipe or the file stdout is redirected to (`-o /dev/stdout > r.json`), so it is
#: followed; only root writes these folders, so no one plants a link there
STREAM_LINK_FOLDERS = ("/dev", "/dev/fd")


def is_stream_link(path: Path) -> bool:
    """Whether `path` is a link that is the system's name for a stream (STREAM_LINK_FOLDERS, or under /proc): the
    only links an output follows; any other is replaced by the output, never written through."""
    if not path.is_symlink():
        return False
    folder = os.path.dirname(os.path.abspath(path))
    return folder in STREAM_LINK_FOLDERS or folder.startswith("/proc/")


def is_special(path: str | Path) -> bool:
    """Whether `path` names something that is there and is no regular file: a device such as /dev/null, a FIFO, a
    socket, /dev/stdout on a terminal or a pipe (through a stream's link, is_stream_link; any other link is not
    special, whatever it names, a device too: it is replaced). Such an output is written as it is, never replaced:
    renaming a new file over /dev/null, as root, would have turned the machine's /dev/null into a plain file."""
    path = Path(path)
    if path.is_symlink() and not is_stream_link(path):
        return False
    return path.exists() and not path.is_file() and not path.is_dir()


def atomic_write(path: str | Path, content: str | bytes) -> None:
    """Write `content` to `path` so that readers see the old file or the new one, never a mix. A link is replaced by
    the new file, never written through (the file it named is left as it was), but for a stream's (is_stream_link:
    /dev/stdout redirected to a file replaces that file); a device or a FIFO (is_special) is written to as it is.
    However the write ends (a full disk, Ctrl-C, SIGTERM raised by session.interrupts) the temporary file goes with it."""
    path = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    if is_special(path):
        with open(path, "wb") as handle:
            handle.write(data)
        return
    if is_stream_link(path):  # /dev/stdout redirected to a file: that file, replaced as any other
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
    if path.is_dir() and not path.is_symlink():  # a link to a folder is replaced, as any link (atomic_write)
        raise InputError("is a directory; expected a file path for the results", location=str(path))
    if is_special(path):  # /dev/null, /dev/stdout, a FIFO: written as they are (atomic_write), so they need only be writable
        if not os.access(path, os.W_OK):
            raise InputError("cannot be written", location=str(path))
        return
    if is_stream_link(path):
        path = Path(os.path.realpath(path))
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"directory {str(parent)!r} does not exist", location=str(path))
    with beside(path, "probe") as probe:
        try:
            open(probe, "xb").close()
        except OSError as exc:
            raise InputError(f"cannot write here: {exc.strerror}", location=str(path)) from None
    if path.exists() and not path.is_symlink() and not os.access(path, os.W_OK):  # a link is replaced, not written
        raise InputError("the existing file is not writable", location=str(path))
