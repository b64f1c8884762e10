"""How a layer below the CLI talks to the user: it is handed a `Say`, one line of text per call, and never prints.

The CLI passes its echo to stderr (or to stdout, for what a command shows as its answer); a test passes a list's
`append`. So what a session, a store or a writer says can be quieted, captured or sent elsewhere without the code
that says it knowing where it goes. A leaf module: any layer may import it.
"""

from __future__ import annotations

from typing import Callable

#: says one line (no trailing newline) to the user
Say = Callable[[str], None]
