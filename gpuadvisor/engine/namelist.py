"""Name lists: a set of names held in one string fact, for ``covers()`` in conditions.

The fact namespace holds numbers, yes/no and strings; a set of names (the ISV
applications a card is listed for, those a profile names) is a string of names one per
line. Names are compared as written here; callers normalise them first.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Separates the names of a name-list fact (names themselves hold no line break).
NAME_SEPARATOR = "\n"


def name_list(names: Iterable[str]) -> str:
    """Names as one string fact (sorted, without duplicates, spacing collapsed)."""
    cleaned = {" ".join(name.split()) for name in names}
    return NAME_SEPARATOR.join(sorted(n for n in cleaned if n))


def covers(offered: str, needed: str) -> bool:
    """Every name of ``needed`` is in ``offered`` (an empty list is always covered)."""
    have = set(offered.split(NAME_SEPARATOR))
    return all(n in have for n in needed.split(NAME_SEPARATOR) if n)
