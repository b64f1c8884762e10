"""Names are data: text from a results file, a store, a config or a workload as each writer must write it.

Any string a writer did not write itself (an experiment, case, variant or param name, a warning, a reading, a
check's words, a census's file and call, a host, a label, an exception's message) may hold anything a file can.
The rule, one for every writer: such text is shown as it is written and never acts.

- Control characters are shown, never passed through (`visible`): every C0 character (newline and tab included: a
  name is one line, and a newline in it would forge a line of the report), DEL, every C1 character (0x9B is a CSI
  on a terminal that reads 8-bit controls), the Unicode line and paragraph separators, and the bidirectional
  overrides and isolates that reorder what a reader sees (CVE-2021-42574). They are shown as Python writes them in
  a string literal (ESC as `\\x1b`, a newline as `\\n`, U+202E as `\\u202e`), the form `repr` uses: the tool's own
  error lines quote a name with `repr`, so a name reads the same in a table and in an error; it is ASCII, so every
  font, log, spreadsheet and markdown renderer shows it; and it covers C1 and the Unicode controls, which the
  Unicode control pictures (U+2400..U+2421, C0 and DEL only) do not. A backslash itself is left as it is (a
  Windows path stays readable), so a name that holds the four characters `\\x1b` reads like one that held ESC:
  both are shown, neither acts.
- On a terminal (rich), text is markup-escaped after that (`rich`), or put in a `Text`, never into a markup string
  as it is: `[/x]` in a name is not a closing tag (that raised MarkupError after the results were saved) and
  `[link=file:///...]` is not a link. The console itself shows what no writer escaped (terminal.StdoutConsole).
- In markdown (`markdown`, `markdown_code`, `markdown_fence`), text cannot leave its table cell, line or code span,
  and renders nothing: no image, link, HTML or heading, and no emphasis, code span, strikethrough or entity (a
  name's `` `code` **bold** `` reads as written): the markdown goes to pull-request comments and job summaries.
- In CSV (`csv_cell`), text that a spreadsheet would read as a formula gets a leading `'` (OWASP's CSV injection
  advice); numbers are numbers.
- In HTML (`html`), text is HTML-escaped, quotes included (the page has no template engine: history.html escapes
  each value it writes with this, and its embedded JSON escapes `<`, `>` and `&` itself).

JSON writers (the results file, github-benchmark) need none of this: JSON escapes control characters itself, and
its reader is a program.
"""

from __future__ import annotations

import html as _html
import re

from rich.markup import escape as _rich_escape

#: what is never written as it is: C0 (0x00-0x1F), DEL and C1 (0x7F-0x9F), the line and paragraph separators, and
#: the bidirectional embeddings, overrides (U+202A-U+202E) and isolates (U+2066-U+2069)
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: the same but for the newline, in text that is already laid out in lines (what rich hands its console)
CONTROL_IN_LINES = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) <= 0xFF else f"\\u{ord(char):04x}")


def visible(text: str) -> str:
    """`text` with every control character shown as a Python string literal writes it (ESC as `\\x1b`)."""
    return CONTROL.sub(_shown, text)


def visible_lines(text: str) -> str:
    """`visible`, keeping newlines: for text a renderer has already laid out in lines."""
    return CONTROL_IN_LINES.sub(_shown, text)


def rich(text: object) -> str:
    """Text for a rich markup string: its controls shown, its brackets escaped."""
    return _rich_escape(visible(str(text)))


# ---- markdown (GitHub-flavoured) ----------------------------------------------------------------------------------

#: raw HTML, and autolinks, begin with `<` and a letter, `/`, `!` or `?` (CommonMark 6.6, 6.5); `<` before anything
#: else ("x < 100") is text, and stays as it is written
_HTML_START = re.compile(r"<(?=[A-Za-z/!?])")
#: a line's content that would open a block in markdown: a heading, a quote, a list item, a thematic break, a code
#: fence, a setext underline (CommonMark 4-5), or a link reference definition (`[x]: http://...`, 4.7, which would
#: make `[x]` anywhere else a link); its first character gets a backslash
_BLOCK_START = re.compile(r"^(\s*)(?:([#>+\-*_=~`\[])|(\d{1,9})([.)]))")


#: what renders inline, each written with a backslash before it (`&` as `&amp;`) so that it shows as it is written: a
#: backslash (it escapes what follows: `\*` would render `*`, and `\|` would undo the escape of the pipe), a code span's
#: backtick, emphasis (`*` always; `_` save between two letters or digits, where it never opens or closes one,
#: CommonMark 6.2, so `train_step` stays as it is), GFM's strikethrough (`~`), and an entity or character reference
#: (`&amp;`, `&#42;` would show `&`, `*`)
_INLINE = re.compile(r"[\\`*~]|(?<![^\W_])_|_(?![^\W_])|&(?=#?\w+;)")
#: what `markdown` changes outside a line's start: a control character, a pipe, `<`, `](`, and what renders inline
_MARKDOWN_SPECIAL = re.compile(f"{CONTROL.pattern}|[|<\\\\`*_~&]|\\]\\(")


def _escaped_inline(match: re.Match[str]) -> str:
    char = match.group()
    return "&amp;" if char == "&" else f"\\{char}"


def _escaped_start(match: re.Match[str]) -> str:
    indent, mark, number, delimiter = match.groups()
    return f"{indent}\\{mark}" if mark else f"{indent}{number}\\{delimiter}"


def markdown(text: object, *, starts_line: bool = False) -> str:
    """Text for a markdown table cell or a line, shown as it is written: it cannot leave the cell (`|` escaped,
    newlines shown), renders no emphasis, code span, strikethrough or entity (each such character escaped, `_INLINE`:
    `` `code` **bold** `` in a name reads as those characters), no link or image (`](` is written `]&#40;`: an entity
    never makes structure) and no HTML (`<` before a tag's first character is `&lt;`). `starts_line`: the text begins
    a line's content (a bullet's), where `#`, `>`, `-`, `1.`, `[x]:` and the like would open a block or define a
    link: its first such character is escaped."""
    shown = str(text)
    if _MARKDOWN_SPECIAL.search(shown) is not None:  # most cells hold none of it: a figure, a plain name
        # backslashes first: those written here must not be escaped again, nor the `&` of the entities written here
        shown = _INLINE.sub(_escaped_inline, visible(shown))
        shown = _HTML_START.sub("&lt;", shown.replace("|", "\\|").replace("](", "]&#40;"))
    if starts_line:
        shown = _BLOCK_START.sub(_escaped_start, shown, count=1)
    return shown


#: a code span as the tool's own notes write one: `run --threads 1`, on one line
_TOOL_SPAN = re.compile(r"`([^`\n]+)`")


def markdown_note(text: object, user: tuple[str, ...] = ()) -> str:
    """A note the tool wrote (a warning, why sampling stopped, the spread note) as a markdown line: its own code spans
    (`` `run --threads 1` ``) render as code, and everything else is escaped as `markdown` escapes it. `user`: the
    user's strings it may hold (a case's name and id, a path, an exception's text): a span that overlaps one of them
    is not the tool's, and stays escaped with them (a case named `` `x` `` reads as those characters)."""
    shown = str(text)
    masked = list(shown)
    for given in sorted((u for u in user if u), key=len, reverse=True):
        start = shown.find(given)
        while start >= 0:
            masked[start : start + len(given)] = "\0" * len(given)
            start = shown.find(given, start + len(given))
    parts, last = [], 0
    for span in _TOOL_SPAN.finditer("".join(masked)):
        if "\0" in span.group():
            continue
        parts += [markdown(shown[last : span.start()]), markdown_code(span.group(1))]
        last = span.end()
    return "".join([*parts, markdown(shown[last:])])


def markdown_code(text: object, *, in_table: bool = False) -> str:
    """Text as a markdown code span (a file:line, a call, a check's expression): shown literally, whatever it holds.
    The span's fence is one backtick longer than the longest run of backticks in the text (CommonMark 6.1), padded
    with a space where the text begins or ends with one; in a table, `|` is escaped (GFM reads it first)."""
    shown = visible(str(text))
    if in_table:
        shown = shown.replace("|", "\\|")
    if not shown:
        return ""
    fence = "`" * (max((len(run) for run in re.findall("`+", shown)), default=0) + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def markdown_fence(lines: list[str]) -> str:
    """The fence of a code block that holds `lines` (each already `visible`): three backticks, or more than the
    longest run of backticks in them, so that no line closes the block (CommonMark 4.5)."""
    longest = max((len(run) for line in lines for run in re.findall("`+", line)), default=0)
    return "`" * max(3, longest + 1)


# ---- CSV ------------------------------------------------------------------------------------------------------------

#: what a spreadsheet reads as the start of a formula (OWASP, CSV injection); a leading tab or carriage return, the
#: other two OWASP names, is already shown as `\\t`, `\\r` by `visible`
FORMULA_START = ("=", "+", "-", "@")


def csv_cell(value: object) -> object:
    """A CSV cell: a number as it is; text with its controls shown and, where it would start a formula, a leading
    `'`, so that a spreadsheet reads the cell as text (some show the `'`: a name is still read as written)."""
    if not isinstance(value, str):
        return value
    shown = visible(value)
    return "'" + shown if shown.startswith(FORMULA_START) else shown


# ---- HTML -----------------------------------------------------------------------------------------------------------


def html(value: object) -> str:
    """Text or an attribute's value (always quoted) as HTML: controls shown; `&`, `<`, `>`, `"` and `'` escaped."""
    return _html.escape(visible(str(value)), quote=True)
