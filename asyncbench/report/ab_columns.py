"""The widths of `ab`'s terminal table (report.paired.print_view): the verdict, the change and the interval whole at
80 columns and up, the names folded over lines in the room left.

rich shrinks a table too wide for the console from its widest wrapping column down, to nothing if it must: a
70-character variant name at COLUMNS=120 took the `what` column whole and left `case` and `verdict` no width at all
(`┃┃ what … ┃ interval … ┃┃`), and at 80 any name left the verdict a column of one letter. So the widths are planned
here, each column given at most what it wants and shrunk, widest first, only down to the floor its stage allows:
first the names to NAME_FLOOR and each figure to its widest cell (a header folds over lines first); then, where that
is still too wide, the names to NAME_LAST and base's and head's medians to their longest word ("1.00" above "ms").
The change, the interval and the verdict's word never shrink below their widest cell: every conclusion the table
prints follows from its interval, so that is the column a name must never take.
"""

from __future__ import annotations

from typing import Sequence

from rich.cells import cell_len

from asyncbench.report import escaping

#: the columns that hold a name (a case id, a variant or metric): folded over lines, never cut
NAMES = ("case", "what")
#: the widest the variant's column is made (in characters): a longer name folds over lines, so that its room is the
#: case id's and the figures' (a 70-character name took a 120-column table's every spare column)
WHAT_MAX = 32
#: the narrowest a name column is made while a figure's header can still fold instead: 8 characters a line keep a
#: folded case id or name readable
NAME_FLOOR = 8
#: the narrowest a name column is made at all, where the figures need the room (80 columns with a WITHIN MARGIN
#: verdict): a name 3 characters a line is long to read, and still every character of it is there
NAME_LAST = 3
#: the figures whose cell is never folded: the change, the interval and the verdict's word, what the gate concludes
WHOLE = ("paired change", "interval", "verdict")
#: a table's columns' borders and padding: a rule before each column and after the last, a space either side of a cell
BORDER, PADDING = 1, 2


def shown(text: str) -> int:
    """The width of `text` as the table shows it: its control characters made visible (report.escaping)."""
    return cell_len(escaping.visible(text))


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def _kept_whole(header: str, cell: str) -> str:
    """The part of a figure's cell kept on one line: the verdict's word ('WITHIN MARGIN', not its parenthesis), a
    median's quantity ('1.00 ms', not ' per 20 steps' after it), any other figure whole."""
    if header.startswith("verdict"):
        return cell.split(" (")[0]
    if header.startswith(("base", "head")):
        return cell.split(" per ")[0]
    return cell


def _is(header: str, names: Sequence[str]) -> bool:
    """Whether `header` is one of `names`, as the view states it ('interval (99.6%)', 'base per 20 steps')."""
    return any(header == name or header.startswith(f"{name} ") for name in names)


def _shrink(widths: list[int], floors: Sequence[int], room: int) -> list[int]:
    """`widths` shrunk, the widest above its floor first, one character at a time, until they fit `room` or each is
    at its floor."""
    widths = list(widths)
    while sum(widths) > room:
        above = [i for i, (width, floor) in enumerate(zip(widths, floors, strict=True)) if width > floor]
        if not above:
            break
        widest = max(above, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


def widths(headers: Sequence[str], rows: Sequence[Sequence[str]], console_width: int) -> list[int]:
    """Each column's width (its text, no padding) for `rows` under `headers` at `console_width` (see the module's
    docstring). Below what the unfolded figures need (under about 70 columns) they still shrink as rich shrinks them."""
    room = max(console_width - BORDER * (len(headers) + 1) - PADDING * len(headers), len(headers))
    columns = [[row[i] for row in rows] for i in range(len(headers))]
    wants, first, last = [], [], []
    for header, cells in zip(headers, columns, strict=True):
        widest = max([shown(header), *map(shown, cells)])
        if _is(header, NAMES):
            want = min(widest, WHAT_MAX) if header == "what" else widest
            wants.append(min(want, room))
            first.append(min(want, NAME_FLOOR))
            last.append(min(want, NAME_LAST))
            continue
        whole = max([_longest_word(header), *(shown(_kept_whole(header, cell)) for cell in cells)])
        wants.append(min(widest, room))
        first.append(whole)
        folded = whole if _is(header, WHOLE) else max([_longest_word(header), *(_longest_word(cell) for cell in cells)])
        last.append(folded)
    return _shrink(_shrink(wants, first, room), last, room)
