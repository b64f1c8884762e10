"""Temporary git worktrees of a revision, each named after the process that owns it, and those left behind pruned.

`asyncbench ab` checks each side's revision out as a worktree in the
temporary folder and removes it when it ends, however it ends, save one
way: a process killed outright (SIGKILL, the out-of-memory killer, a CI
job cancelled hard) runs no cleanup, and its worktree stays, registered in
the repository (`git worktree list`) and taking a checkout's room. So each
worktree's folder name says who owns it (`asyncbench-base-<host>-<pid>-<start>-…`:
the machine, the pid and that process's start time, as a pid alone may be
reused), and the next `ab` on the repository removes every such worktree
whose owner is gone: only asyncbench's own (by that name), never one whose
owner still runs (a second `ab` at the same time) or runs on another
machine (a repository on a shared file system).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from asyncbench.errors import InputError
from asyncbench.host import git as git_commands

# How long a `git` command may take before it counts as not answering.
GIT_TIMEOUT_S = 60.0
# A worktree of ours, from its folder's name: the side, the owner's machine, pid and start time (`_owner`), mkdtemp's suffix.
OWNED = re.compile(r"^asyncbench-(?P<side>[a-z]+)-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-(?P<start>\d+)-")
# Where Linux says when a process started (absent elsewhere: psutil then).
PROC_STAT = Path("/proc/self/stat")


@dataclass(frozen=True)
class Pruned:
    """A worktree left by an asyncbench process that is gone, now removed."""

    path: Path
    pid: int


def git(repo: Path, *args: str) -> str:
    """`git -C repo ARGS`'s output (host.git); CalledProcessError when it fails, InputError when there is no git at
    all."""
    try:
        return git_commands.run(repo, *args, timeout_s=GIT_TIMEOUT_S)
    except FileNotFoundError:
        raise InputError("git is not installed: --base and --head name git revisions") from None


def _started(pid: int) -> int | None:
    """When process `pid` started, None where there is no such process. On Linux the kernel's own count (clock
    ticks since boot, /proc/PID/stat's 22nd field), which no change of the wall clock moves (psutil's start time
    does: it adds the boot time, which NTP's steps shift); elsewhere psutil's, in hundredths of a second.
    PermissionError where this user may not look at that process."""
    if PROC_STAT.exists():
        try:
            return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        except (FileNotFoundError, ProcessLookupError):
            return None
    import psutil

    try:
        return round(psutil.Process(pid).create_time() * 100)
    except psutil.NoSuchProcess:
        return None
    except psutil.AccessDenied:
        raise PermissionError(f"process {pid}") from None


def _gone(pid: int, start: int) -> bool:
    """Whether the process that started at `start` as `pid` has ended (a pid now held by a later process counts as
    ended; one this user may not look at counts as running: nothing of another's is removed on a guess)."""
    try:
        return _started(pid) != start
    except PermissionError:
        return False


def host_tag() -> str:
    """This machine in a folder name: its host name's hash (a name may hold any character), 8 hex digits."""
    return hashlib.sha256(platform.node().encode()).hexdigest()[:8]


def _owner() -> str:
    """This process as a worktree's name states its owner: machine, pid and start time."""
    return f"{host_tag()}-{os.getpid()}-{_started(os.getpid())}"


@contextlib.contextmanager
def checkout(repo: Path, sha: str, side: str) -> Iterator[Path]:
    """The commit `sha` of `repo` as a temporary worktree named after this process, removed afterwards.
    CalledProcessError when git cannot check it out."""
    place = Path(tempfile.mkdtemp(prefix=f"asyncbench-{side}-{_owner()}-"))
    try:
        git(repo, "worktree", "add", "--detach", "--force", str(place), sha)
    except BaseException:
        shutil.rmtree(place, ignore_errors=True)
        raise
    try:
        yield place
    finally:
        remove(repo, place)


def remove(repo: Path, place: Path) -> None:
    """A worktree gone, its folder and the repository's record of it; git's own removal first (it works on a
    missing folder too), by hand where git refuses."""
    try:
        git(repo, "worktree", "remove", "--force", "--force", str(place))  # twice: even one git sees as locked
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, InputError):
        shutil.rmtree(place, ignore_errors=True)
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired, InputError):
            git(repo, "worktree", "prune")


def _listed(repo: Path) -> list[Path]:
    """Every worktree the repository records (the main one included)."""
    try:
        listing = git(repo, "worktree", "list", "--porcelain")
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return []
    return [Path(line.removeprefix("worktree ")) for line in listing.splitlines() if line.startswith("worktree ")]


def stale(repo: Path) -> list[Pruned]:
    """The worktrees of `repo` that an asyncbench process on this machine made and can no longer remove: its owner
    is gone (no process with that pid, or one started at another time: the pid was reused)."""
    found = []
    here = host_tag()
    for path in _listed(repo):
        named = OWNED.match(path.name)
        if named is None or named["host"] != here:
            continue
        pid = int(named["pid"])
        if _gone(pid, int(named["start"])):
            found.append(Pruned(path, pid))
    return found


def prune_stale(repo: Path) -> list[Pruned]:
    """Remove the worktrees `stale` finds; what was removed."""
    pruned = stale(repo)
    for left in pruned:
        remove(repo, left.path)
    return pruned
