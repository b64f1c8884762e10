"""The data an HTML history page embeds for its script to draw (one JSON element), as the page tests read it back."""

from __future__ import annotations

import json
import re
from typing import Any

#: the element that holds the page's data (asyncbench/report/html.py writes it)
_DATA = re.compile(r'<script type="application/json" id="asyncbench-data">(.*?)</script>', re.S)


def embedded(page: str) -> dict[str, Any]:
    """The JSON the page `page` (its HTML) embeds; fails the test when there is none."""
    found = _DATA.search(page)
    assert found is not None
    return json.loads(found.group(1))
