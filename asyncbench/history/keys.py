"""A run's key in the history: what makes recording a run twice "already recorded" and two runs never one.

A results file (schema 6 on) and an `ab` file (version 2 on) carry the
run's own id, made with the report: it is the key, the same for a run
recorded as it ends (`run --record`) and for its file recorded later, and
two runs that end in the same second on the same revision have two. A file
written before that has no id: its key is a hash of its whole canonical
content, which two different runs cannot share and which the same file
always has.

Stores written before keys were ids (store schema 1) keyed runs by their
creation second, host, revision and case ids (`legacy`): an id-less file is
also looked for under that key, so a file recorded before the upgrade is
not recorded again after it. No run is ever stored under a legacy key now,
so that lookup cannot merge two runs recorded since.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from asyncbench.results.ab_file import ABFile
from asyncbench.results.labels import Label
from asyncbench.results.schema import Report


@dataclass(frozen=True)
class RunKey:
    """`key` is stored with the run; `also` are keys an earlier asyncbench may have stored the same run under."""

    key: str
    also: tuple[str, ...] = ()

    @property
    def all(self) -> tuple[str, ...]:
        return (self.key, *self.also)


def of_report(report: Report) -> RunKey:
    """A results report's key: its run id, else the hash of its whole content (and the legacy key)."""
    if report.run_id:
        return RunKey(report.run_id)
    return RunKey(_hash(report.to_dict()), (_legacy_report(report),))


def of_ab(data: ABFile) -> RunKey:
    """An `ab` file's key: its run id, else the hash of its whole content as read (and the legacy key)."""
    if data.run_id:
        return RunKey(data.run_id)
    identity = json.dumps(["ab", data.created, data.revision, [(c.id, c.status) for c in data.cases]])
    return RunKey(_hash(_ab_content(data)), (hashlib.sha256(identity.encode()).hexdigest(),))


#: an `ab` case's fields the key of an id-less file was first hashed without (ABCase grew them since)
_NOT_HASHED = frozenset({"params", "experiment"})


def _ab_content(data: ABFile) -> dict[str, Any]:
    """An id-less `ab` file's content as read, in the shape its key was first hashed in: every field but where it
    lies (`source`), each ratio with its verdict, each case without params (files without an id state none) and
    without its experiment (read from its id since ABCase shares the case identity: no new fact). The reader's types
    may grow; the keys of files already recorded must not change, or they would be recorded twice."""
    content = {name: value for name, value in dataclasses.asdict(data).items() if name != "source"}
    content["cases"] = [
        {
            **{name: value for name, value in case.items() if name not in _NOT_HASHED},
            "ratios": [{**ratio, "label": str(ratio["label"]), "verdict": str(Label(ratio["label"]).verdict)} for ratio in case["ratios"]],
        }
        for case in content["cases"]
    ]
    return content


def _hash(content: Any) -> str:
    canonical = json.dumps(content, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _legacy_report(report: Report) -> str:
    """The key store schema 1 gave a results report (creation second, host, revision, case ids and statuses)."""
    environment = report.environment
    identity = [report.created, environment.get("hostname"), environment.get("git_sha"), [(r.id, str(r.status)) for r in report.results]]
    return hashlib.sha256(json.dumps(identity, default=str).encode()).hexdigest()
