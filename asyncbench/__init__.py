"""asyncbench: measure what asynchronous execution does for (and to) array programs."""

__version__ = "0.1.0"
