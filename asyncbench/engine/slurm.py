"""Slurm's own commands, as a submission asks them: run with a bound on their time, their failures read, and what is
checked before a submission's jobs are submitted.

A Slurm command that fails says why on stderr, in words that depend on the
daemon it could not reach: `unreachable` and `refused` turn that into one line
that names the daemon (the controller, slurmctld; the accounting daemon,
slurmdbd, behind sacct), so a controller that is down is said as such rather
than as a partition that does not exist. `check_slurm` asks `scontrol ping`
first: it answers at once either way, where sinfo retries for seconds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Mapping, Sequence

from asyncbench.errors import InputError
from asyncbench.results.plan import ExecutorSettings

#: sacct needs this long at most to answer for a few hundred jobs; a slower answer is a broken controller
SACCT_TIMEOUT_S = 60
#: `scontrol ping` answers at once from a live controller and fails at once on a refused connection; this bounds
#: the case of a controller host that drops packets, where sinfo would retry for tens of seconds before saying so
CONTROLLER_TIMEOUT_S = 5
#: what Slurm's commands say when the controller (slurmctld) or the accounting daemon (slurmdbd, behind sacct)
#: cannot be reached — captured from Slurm 22.05 (tests/e2e/cluster/test_hostile.py); matched in lower case
_UNREACHABLE = (
    ("the Slurm controller", ("unable to contact slurm controller", "slurmctld(", "zero bytes were transmitted", "socket timed out")),
    ("Slurm's accounting daemon (slurmdbd)", ("slurm_persist_conn_open", "problem talking to the database", "slurmdbd")),
)
#: a line Slurm prints around the news that the controller is down (scontrol ping's banner): says nothing itself
_BANNER = re.compile(r"^[*\s]*(restore slurmctld daemon to service)?[*\s]*$", re.IGNORECASE)
#: Slurm's GRES entry for GPUs: gpu:4, gpu:h100:8, gpu:h100:8(S:0-1)
_GPU_GRES = re.compile(r"gpu(?::[^:,()]+)?:(\d+)")
#: a GPU count as sbatch's --gpus and --gpus-per-task take it: N or TYPE:N
_GPU_COUNT = re.compile(r"(?:[^:,]+:)?(\d+)")
#: sbatch options that ask for GPUs per node or per task, whose count is each job's (one node, one task)
_GPU_OPTIONS = ("gpus", "gpus-per-task")
#: sbatch options that ask for GPUs in a way asyncbench does not count (per socket, as TRES)
_GPU_UNCOUNTED = ("gpus-per-socket", "tres-per-task")


def run(command: Sequence[str], timeout_s: float = SACCT_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """A Slurm command's answer; one that failed is InputError with what it said (`refused`)."""
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise InputError(f"{command[0]} not found on the PATH: run this where Slurm's commands are (a login node)") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"{command[0]} gave no answer in {timeout_s:g} s: is the Slurm controller up?") from None
    if done.returncode != 0:
        raise InputError(refused(command[0], done.stderr + "\n" + done.stdout, done.returncode))
    return done


def _said(text: str) -> str:
    """The first line of a command's output that says something (banners and blank lines left out), cut to a line."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not _BANNER.match(line)]
    return lines[0][:300] if lines else ""


def unreachable(text: str) -> str | None:
    """Which Slurm daemon a command's output says it could not reach (None: it says no such thing)."""
    lowered = text.lower()
    return next((daemon for daemon, signs in _UNREACHABLE if any(sign in lowered for sign in signs)), None)


def refused(tool: str, output: str, code: int) -> str:
    """One line for a Slurm command that failed: an unreachable daemon said as such, else the command's own words."""
    said = _said(output) or f"exit {code}"
    daemon = unreachable(output)
    if daemon is not None:
        return f"{daemon} cannot be reached ({tool}: {said}): is it up? `sinfo` and `scontrol ping` say more"
    return f"{tool} failed: {said}"


def check_controller() -> None:
    """The Slurm controller answers (`scontrol ping`, at once), else InputError saying so: asked first, so that a
    controller that is down is said in a second, not, after sinfo's retries, as a partition that does not exist."""
    try:
        run(["scontrol", "ping"], CONTROLLER_TIMEOUT_S)
    except InputError as exc:
        if "gave no answer" in exc.message:
            raise InputError(f"the Slurm controller gave no answer in {CONTROLLER_TIMEOUT_S} s (scontrol ping): is slurmctld up?") from None
        raise


def gpus_per_node(gres_lines: Sequence[str]) -> list[int]:
    """Each node's GPU count from sinfo's %G lines ("(null)", "gpu:4", "gpu:h100:8(S:0-1),gpu:a100:2")."""
    return [sum(int(n) for n in _GPU_GRES.findall(line)) for line in gres_lines if line.strip()]


def asked_gpus(settings: ExecutorSettings) -> int | None:
    """How many GPUs each job asks Slurm for: `gpus_per_node`, or a GPU `gres` (gpu:2, gpu:h100:2; a bare `gpu` is
    one), `gpus` or `gpus-per-task` among the sbatch options (a job is one task on one node); 0: none; None: some, in
    a form not counted here (`gpus-per-socket`, `tres-per-task`)."""
    if settings.gpus_per_node:
        return settings.gpus_per_node
    options = {name: str(value) for name, value in settings.sbatch.items()}
    gres = options.get("gres", "")
    if "gpu" in gres:
        counts = _GPU_GRES.findall(gres)
        return sum(int(n) for n in counts) if counts else 1
    for name in _GPU_OPTIONS:
        if name in options:
            found = _GPU_COUNT.fullmatch(options[name].strip())
            return int(found[1]) if found else None
    uncounted = any(name in options and (name != "tres-per-task" or "gpu" in options[name]) for name in _GPU_UNCOUNTED)
    return None if uncounted else 0


def check_slurm(settings: ExecutorSettings, given_as: Mapping[str, str] | None = None) -> str:
    """What would make every job fail, said before any is submitted (InputError): no sbatch here, a controller that
    does not answer, a partition Slurm does not know, more GPUs per node than any node of the partition has.
    `given_as`: how the user gave each key (`--partition`, `executor.partition`), for the errors. Returns the
    partition."""
    named = {"partition": "--partition", "gpus_per_node": "--gpus-per-node", **(given_as or {})}
    missing = [tool for tool in ("sbatch", "sacct", "sinfo", "scancel", "scontrol") if shutil.which(tool) is None]
    if missing:
        raise InputError(f"--executor slurm: {', '.join(missing)} not found on the PATH (is this a Slurm login node?)")
    check_controller()
    partition = settings.partition
    if partition is None:
        listed = run(["sinfo", "-h", "-o", "%P"])
        defaults = [p.rstrip("*") for p in listed.stdout.split() if p.endswith("*")]
        if not defaults:
            raise InputError("--executor slurm: this cluster has no default partition; name one with --partition")
        partition = defaults[0]
    try:
        run(["scontrol", "show", "partition", "--", partition])
        known = run(["sinfo", "-h", "-p", partition, "-o", "%P"]).stdout.strip()
    except InputError as exc:
        if unreachable(exc.message):
            raise
        known = ""
    if not known:
        partitions = sorted({p.rstrip("*") for p in run(["sinfo", "-h", "-o", "%P"]).stdout.split()})
        shown = named["partition"] if settings.partition is not None else "the default partition"
        raise InputError(f"{shown} {partition!r}: Slurm knows no such partition; it has: {', '.join(partitions) or 'none'}")
    if settings.gpus_per_node:
        counts = gpus_per_node(run(["sinfo", "-h", "-N", "-p", partition, "-o", "%G"]).stdout.splitlines())
        most = max(counts, default=0)
        if settings.gpus_per_node > most:
            has = f"at most {most} per node" if most else "no GPUs"
            raise InputError(f"{named['gpus_per_node']} {settings.gpus_per_node}: partition {partition!r} has {has}")
    return partition
