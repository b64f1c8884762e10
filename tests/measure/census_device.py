"""A pretend framework for the census's own tests: a device value whose reads wait (a sleep stands for a queue being
drained), nested as a framework's are (`item` calls `wait`, `float()` calls `item`). Its module is named as the
framework's (FRAMEWORK), so its frames are never the user's line."""

from __future__ import annotations

import time

from asyncbench.backends.handles import SyncHook

#: the module the census is told is the framework's
FRAMEWORK = frozenset({__name__})
#: how long a wait blocks: well above the frame fallback's threshold, far below a test's patience
WAIT_S = 0.002


class Value:
    """A device value: reading it waits for the queue."""

    def wait(self) -> None:
        time.sleep(WAIT_S)

    def item(self) -> float:
        self.wait()
        return 1.0

    def __float__(self) -> float:
        return self.item()

    def __repr__(self) -> str:
        self.wait()
        return "Value(1.0)"

    def shape(self) -> tuple[int, ...]:
        """No wait: what a framework knows without the device."""
        return (1,)


def sleep_inside() -> None:
    """A framework function that waits where no hook is: what the frame fallback is for."""
    time.sleep(WAIT_S)


HOOKS = (
    SyncHook(Value, "wait", "explicit wait", "Value.wait"),
    SyncHook(Value, "item", "conversion", "Value.item"),
    SyncHook(Value, "__float__", "conversion", "float(Value)"),
    SyncHook(Value, "__repr__", "print", "repr(Value)"),
)
