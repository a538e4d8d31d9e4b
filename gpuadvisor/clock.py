"""The report date, ``provenance.generated_at`` (CONTRACT §6).

A report a manager signs carries the day it was made. ``SOURCE_DATE_EPOCH`` (the
reproducible-builds convention, seconds since 1970 in UTC) fixes it, so the same inputs
give the same bytes on any day; without it the date is today's, on the local calendar
of whoever runs gpuadvisor. The variable is input: anything but a whole number of
seconds that names a calendar day is refused with a message, never a traceback.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Mapping

from gpuadvisor.errors import InputError

#: Decimal digits only: ``int()`` would also take ``1_000`` and other scripts' digits.
_WHOLE = re.compile(r"\s*-?[0-9]+\s*")


def report_date(
    environ: Mapping[str, str] | None = None,
    today: Callable[[], dt.date] = dt.date.today,
) -> str:
    """``YYYY-MM-DD``: from ``SOURCE_DATE_EPOCH`` when it is set, else today's date."""
    epoch = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH", "")
    if not epoch.strip():
        return today().isoformat()
    if not _WHOLE.fullmatch(epoch):
        raise InputError(f"SOURCE_DATE_EPOCH must be an integer, got {epoch[:40]!r}")
    try:
        return dt.datetime.fromtimestamp(int(epoch), tz=dt.timezone.utc).date().isoformat()
    except (ValueError, OverflowError, OSError):
        raise InputError(
            f"SOURCE_DATE_EPOCH is not a date: {epoch[:40]!r} seconds since 1970"
        ) from None
