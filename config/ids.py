"""Ids read from a request (a POST body, a query string): ASCII digits within the database's
integers, or nothing.  ``str.isdigit`` is not enough: it accepts "²" and other digits that
``int`` refuses (a ValueError, a 500) and numbers past the 64-bit column that the database
refuses (an overflow, a 500)."""

from __future__ import annotations

import re

MAX_ID = 2**63 - 1  # BigAutoField (DEFAULT_AUTO_FIELD)
_ID = re.compile(r"[0-9]{1,19}", re.ASCII)


def request_id(value: object) -> int | None:
    """``value`` as an id (0 to ``MAX_ID``), or None when it is not one."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        return None
    n = int(value)
    return n if n <= MAX_ID else None


def request_ids(values) -> list[int]:
    """The ids among ``values`` (the others dropped), in order."""
    return [n for n in map(request_id, values) if n is not None]
