"""What differs between two runs' environments: the machine and software facts a comparison lists ("environment
differs: cpu: EPYC → Xeon"), and whether their CPU thread pools were sized alike, without which a CPU case's machine
reference says nothing of the machine (verdicts.compare)."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

# Environment facts that differ between any two commits and say nothing about the machine.
IGNORED_ENVIRONMENT = ("git_sha",)
#: the environment's facts of each framework a run's cases used (`frameworks.torch.version`)
FRAMEWORKS = "frameworks."


def _flatten(mapping: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


# Keys of a merged report's environment (gather, merge) that say how it was put together, not what it ran on.
GATHERED = ("sweep",)


def _machine_facts(environment: Mapping[str, Any]) -> dict[str, Any]:
    """The facts to compare of one report's environment. A merged report keeps each machine's facts under
    `machines`: where that is one machine (a matrix's shards on one runner), its facts are compared as a single
    run's are, so that a baseline merged from shards shows no 'differs' line for a machine that is the same."""
    machines = environment.get("machines")
    facts = {key: value for key, value in environment.items() if key not in ("machines", *GATHERED)}
    if isinstance(machines, Mapping) and len(machines) == 1:
        (only,) = machines.values()
        if isinstance(only, Mapping):
            return {**facts, **only}  # the machine's own facts first: the common ones are drawn from them
    if machines is not None:
        facts["machines"] = machines
    return facts


def _used_by_one(key: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether `key` is a framework's fact that one run has no entry for at all: a run records the frameworks its
    cases used, so a run of torch cases alone says nothing of numpy's version ('2.4.6' → None was printed as a change
    where the same environment held both)."""
    if not key.startswith(FRAMEWORKS):
        return False
    framework = FRAMEWORKS + key[len(FRAMEWORKS) :].split(".", 1)[0] + "."
    return not any(name.startswith(framework) for name in old) or not any(name.startswith(framework) for name in new)


def changes(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> tuple[tuple[str, Any, Any], ...]:
    """(key, baseline, current) of every machine or software fact that differs between two runs' environments; a
    framework only one of the runs used is no difference."""
    old, new = dict(_flatten(_machine_facts(baseline))), dict(_flatten(_machine_facts(current)))
    return tuple(
        (key, old.get(key), new.get(key))
        for key in sorted(old.keys() | new.keys())
        if old.get(key) != new.get(key) and key not in IGNORED_ENVIRONMENT and not _used_by_one(key, old, new)
    )


def pools_changed(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> str | None:
    """How the two runs' CPU thread pools were sized differently (their `thread_variables`, `run --threads`), in
    words: "the runs' CPU thread pools differ (OMP_NUM_THREADS 1 → 2)". A CPU case's reference runs in the case's
    pools (measure.reference), so a free pool against a pinned one moved it 42× in one case and 1.7× the other way in
    the next of the same two runs, which no change of the machine explains: its speed is not read as the machine's
    (verdicts.machine.change). None where they match."""
    old, new = (_machine_facts(environment).get("thread_variables") for environment in (baseline, current))
    old, new = (pools if isinstance(pools, Mapping) else {} for pools in (old, new))
    if old == new:
        return None
    moves: dict[tuple[str, str], list[str]] = {}  # each change of size, with the variables that made it
    for key in sorted(old.keys() | new.keys()):
        if old.get(key) != new.get(key):
            moves.setdefault((str(old.get(key, "unset")), str(new.get(key, "unset"))), []).append(key)
    said = "; ".join(f"{', '.join(keys)} {was} → {now}" for (was, now), keys in moves.items())
    return f"the runs' CPU thread pools differ ({said})"
