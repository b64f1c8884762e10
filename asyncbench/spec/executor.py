"""The `executor:` settings: where a plan's jobs run, from a config, the command line and `--set executor.KEY=V`.

One table of keys (`KEYS`) checks a value wherever it comes from, so a config's
`executor: {partition: gpu}`, `--partition gpu` and `--set executor.partition=gpu`
say the same and fail the same way: one line naming the key.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Mapping, Sequence

from asyncbench.errors import suggestion
from asyncbench.results import fields
from asyncbench.results.plan import EXECUTOR_KINDS, JOB_UNITS, ExecutorSettings
from asyncbench.spec.schema import type_name

#: Slurm's time formats for a limit: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS
_TIME = re.compile(r"^(?:(?P<days>\d+)-)?(?P<a>\d+)(?::(?P<b>\d+))?(?::(?P<c>\d+))?$")
#: an sbatch option's long name (what follows `--`), as sbatch spells them (matched whole: `$` would let "qos\n" by)
_SBATCH_NAME = re.compile(r"[a-z][a-z0-9-]*")
#: options asyncbench sets itself: given again through `sbatch`, the job would not be what the settings say
OWN_SBATCH = ("partition", "gpus-per-node", "time", "account", "exclusive", "nodes", "output", "error", "job-name", "signal")
#: options that would change what the job is, or what sbatch answers, under the settings' feet: `wrap` replaces the
#: batch script with a command line of its own, `array` and `open-mode` are submitit's own (one sbatch call is a job
#: array of the submission's jobs), `ntasks-per-node` asyncbench's (one `asyncbench run` per job), and `parsable`, `wait`
#: and `test-only` change sbatch's answer, from which submitit reads the job ids (or submit nothing at all)
SUBVERTING_SBATCH = ("wrap", "array", "open-mode", "ntasks-per-node", "parsable", "wait", "test-only")
#: sbatch's options that take no value (`sbatch --help`, Slurm 22.05), the only ones a KEY without =VALUE may name:
#: any other (`--sbatch qos`) would reach sbatch as a bare flag, which it refuses or, worse, reads as something else
SBATCH_FLAGS = (
    "contiguous", "get-user-env", "hold", "ignore-pbs", "no-kill", "no-requeue", "overcommit", "oversubscribe", "reboot",
    "requeue", "spread-job", "use-min-nodes",
)  # fmt: skip
#: Slurm keeps a time limit as 32-bit minutes, the top values meaning "none" and "infinite": anything above is a typo
MAX_TIME_MIN = 0xFFFFFFFD
#: which command-line option sets each key, where it is not `--KEY` (errors name what the user typed)
OPTIONS = {"kind": "--executor", "time_min": "--time-limit"}


def _choice(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}{suggestion(str(value), choices)}")
        return str(value)

    return check


def plain(value: str, what: str = "the value") -> str:
    """`value` if it holds no control character (ValueError naming the first one, escaped, otherwise): what goes into
    a batch script or names a file must not start a line of its own there."""
    found = fields.CONTROL.search(value)  # submitit writes one `#SBATCH` line per option: a newline starts another
    if found:
        raise ValueError(f"{what} holds a control character ({found.group()!r}): {value!r}")
    return value


def option(key: str) -> str:
    """The command-line option that sets an executor key (`time_min` -> `--time-limit`)."""
    return OPTIONS.get(key, f"--{key.replace('_', '-')}")


def given_as(key: str, options: Mapping[str, Any], sets: Sequence[str]) -> str:
    """How the user gave an executor key, for errors found later (a partition Slurm does not know): the option
    (`--partition`), `--set executor.KEY`, or the config's `executor.KEY`, the command line winning as it does."""
    if key in options:
        return option(key)
    if any(text.strip().startswith(f"executor.{key}=") for text in sets):
        return f"--set executor.{key}"
    return f"executor.{key}"


def _name(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        plain(value)
    if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value):
        raise ValueError(f"expected a name without spaces, got {type_name(value)} {value!r}")
    return value


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"expected a whole number of GPUs (0 or more), got {value!r}")
    return value


def time_minutes(value: Any) -> int:
    """A Slurm time limit (60, "90", "1:30:00", "2-00:00:00") as whole minutes, rounded up; at least one."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"expected minutes or Slurm's D-HH:MM:SS, got {type_name(value)} {value!r}")
    match = _TIME.match(str(value).strip())
    if not match:
        raise ValueError(f"expected minutes or Slurm's D-HH:MM:SS, got {value!r}")
    days = int(match["days"] or 0)
    parts = [int(p) for p in (match["a"], match["b"], match["c"]) if p is not None]
    if match["days"]:  # D-HH[:MM[:SS]]
        hours, minutes, seconds = (parts + [0, 0])[:3]
    elif len(parts) == 3:
        hours, minutes, seconds = parts
    elif len(parts) == 2:  # MM:SS
        hours, (minutes, seconds) = 0, parts
    else:
        hours, minutes, seconds = 0, parts[0], 0
    total_s = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    if total_s <= 0:
        raise ValueError(f"a time limit must be more than nothing, got {value!r}")
    if -(-total_s // 60) > MAX_TIME_MIN:
        raise ValueError(f"a time limit must be at most {MAX_TIME_MIN} minutes (Slurm's bound), got {value!r}")
    return -(-total_s // 60)


#: the units `--time-limit` takes beside Slurm's clock forms, in seconds
TIME_LIMIT_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600}
_WITH_UNIT = re.compile(r"\s*(?P<number>\d+)\s*(?P<unit>s|m|min|h)\s*")


def command_line_time(text: str) -> str:
    """`--time-limit` as the `time_min` key takes it: 90m, 2h (whole minutes, rounded up) or Slurm's clock forms
    (1:30:00, 2-00:00:00) as written. A plain number is a ValueError: Slurm reads `--time=30` as minutes, a reader of
    `--gate-time` as seconds, so the option asks for its unit as every duration on the command line does (the config
    key's name, time_min, says its unit: there 30 stays minutes)."""
    stripped = str(text).strip()
    if stripped.isdigit():
        raise ValueError(
            f"write the time limit with its unit, such as {stripped}m or {stripped}h, or as Slurm's H:MM:SS "
            "(a plain number is ambiguous: minutes or seconds?)"
        )
    match = _WITH_UNIT.fullmatch(stripped)
    if match is None:
        return stripped  # Slurm's forms, checked with the config's (time_minutes)
    seconds = int(match["number"]) * TIME_LIMIT_UNITS[match["unit"]]
    if seconds <= 0:
        raise ValueError("a time limit must be more than nothing")
    return str(-(-seconds // 60))


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def sbatch_options(value: Any) -> dict[str, str | bool]:
    """More sbatch options: a mapping {qos: high, constraint: h100} (a value of true: a flag such as `requeue`,
    one of SBATCH_FLAGS). Each becomes a `#SBATCH` line of the batch script: no control character gets in."""
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a mapping of sbatch option -> value (qos: high), got {type_name(value)}")
    options: dict[str, str | bool] = {}
    for key, raw in value.items():
        name = plain(str(key), "the sbatch option's name").lstrip("-")
        if not _SBATCH_NAME.fullmatch(name):
            raise ValueError(f"{key!r} is not an sbatch option name (qos, constraint, mem, ...)")
        if name in OWN_SBATCH:
            raise ValueError(f"{name!r} is set by asyncbench itself: use the executor's own key for it")
        if name in SUBVERTING_SBATCH:
            raise ValueError(f"{name!r} would change what each job runs or what sbatch answers: asyncbench and submitit set it")
        if isinstance(raw, (dict, list)) or raw is None or raw is False:
            raise ValueError(f"sbatch option {name!r} takes a plain value, got {raw!r}")
        if raw is True and name not in SBATCH_FLAGS:
            raise ValueError(
                f"sbatch option {name!r} needs a value ({name}=VALUE); only sbatch's flags go without: {', '.join(SBATCH_FLAGS)}"
            )
        options[name] = True if raw is True else plain(str(raw), f"sbatch option {name!r}")
    return options


#: key -> (field of ExecutorSettings, check). The time limit is `time_min`: whole minutes, or a quoted Slurm time
#: ("1:30:00"); unquoted, YAML 1.1 reads 1:30:00 as the sexagesimal number 5400
KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "kind": ("kind", _choice(EXECUTOR_KINDS)),
    "per": ("per", _choice(JOB_UNITS)),
    "partition": ("partition", _name),
    "gpus_per_node": ("gpus_per_node", _count),
    "time_min": ("time_min", time_minutes),
    "account": ("account", _name),
    "exclusive": ("exclusive", _flag),
    "sbatch": ("sbatch", sbatch_options),
}


def apply(settings: ExecutorSettings, key: str, value: Any) -> ExecutorSettings:
    """`settings` with `key` set to `value`, checked (ValueError: what is wrong, for the caller to place)."""
    if key not in KEYS:
        raise ValueError(f"unknown executor key {key!r}{suggestion(key, list(KEYS))}; allowed: {', '.join(KEYS)}")
    field, check = KEYS[key]
    if key == "sbatch":  # more options add to the ones already given
        return dataclasses.replace(settings, sbatch={**settings.sbatch, **check(value)})
    return dataclasses.replace(settings, **{field: check(value)})
