"""Where a corpus plants its synchronizations: each on a line marked `# planted: NAME`, so that a test can say which
line the census must name without counting lines itself (tests/measure/sync_corpus.py, stream_sync_corpus.py)."""

from __future__ import annotations

from pathlib import Path


def planted_line(path: Path, name: str) -> int:
    """The line of `path` marked `# planted: NAME`."""
    lines = path.read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if text.rstrip().endswith(f"# planted: {name}"))
