"""Which rows of ``nvidia-smi --query-gpu=... --format=csv`` are which GPU's, and how the
rows of one GPU become a window, for looped queries (``-l SEC``, ``-lms MS``).

nvidia-smi prints one row per GPU and query; looped, it prints every GPU's row again
each interval, under the one header. Which rows are one GPU's:

- an identity column (:data:`~._query_columns.IDENTITY`: index, UUID, bus id, serial)
  says it: rows that agree on it are one GPU's, in the order they came;
- else the ``timestamp`` column. nvidia-smi stamps each row when it reads that GPU, so
  one loop over N GPUs prints N rows milliseconds apart (or with one stamp), then waits
  its interval. When the rows fall into bursts of N, the gap that ends a burst clearly
  longer than the gaps within one (:data:`BURST_RATIO`, median against median), the
  rows are N GPUs, and a row's GPU is taken to be its place in its burst. nvidia-smi
  usually lists the GPUs in one order every loop but does not promise it (captures exist
  whose rows come in another order from one loop to the next), so the note says that an
  index column makes it certain. Otherwise rows that follow one another are one GPU's
  samples;
- with neither, the rows are one GPU's samples.

Rows that differ in a column one card never changes (:data:`~._query_columns.FIXED`:
name, memory total, VBIOS) are never one GPU's samples: without an identity column or
bursts they are one GPU each, as a one-off query of a mixed host prints them. Where
rows were taken as one GPU's, or told apart by their bursts, a note says so.

One GPU's rows become a window, as ``dmon`` and ``probe`` give one: every row is one of
``Gpu.samples``; readings become their window figures by
:data:`~._query_columns.SERIES` and :data:`~._query_columns.SPREAD`; a clock event
reason becomes the share of rows in which it was active; every other value (names,
limits, error counters) is the latest row's that reports it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise
from statistics import mean, median
from typing import Any

from gpuadvisor.evidence._limits import MAX_GPUS, tick
from gpuadvisor.evidence._query_columns import FIXED, IDENTITY, SERIES, SPREAD, TIMESTAMP
from gpuadvisor.nvidia.values import clean

Row = tuple[int, dict[str, str]]
Data = dict[str, Any]

#: How much longer than the gaps within a burst (the rows of one loop over the GPUs) the
#: gap after it must be for the rows to read as bursts: a loop's rows come milliseconds
#: apart, its interval is 10 ms or more; a single GPU's samples come evenly spaced.
BURST_RATIO = 2.0
_STAMP = re.compile(
    r"^(?P<date>\d{4}/\d\d/\d\d) (?P<h>[01]\d|2[0-3]):(?P<m>[0-5]\d):(?P<s>[0-5]\d)"
    r"(?:\.(?P<fraction>\d{1,6}))?$"
)
_EPOCH = datetime(1970, 1, 1)


def stamps(rows: Sequence[Row]) -> list[float | None]:
    """Each row's time stamp in seconds (None where it has none nvidia-smi prints)."""
    days: dict[str, float | None] = {}  # a loop's rows share a date: read each once
    seconds: list[float | None] = []
    for _, row in rows:
        match = _STAMP.match(row.get(TIMESTAMP, "").strip())
        if match is None:
            seconds.append(None)
            continue
        date = match.group("date")
        if date not in days:
            try:
                days[date] = (datetime.strptime(date, "%Y/%m/%d") - _EPOCH).total_seconds()
            except ValueError:  # 2024/02/30
                days[date] = None
        day = days[date]
        if day is None:
            seconds.append(None)
            continue
        fraction = match.group("fraction") or "0"
        clock = int(match.group("h")) * 3600 + int(match.group("m")) * 60 + int(match.group("s"))
        seconds.append(day + clock + int(fraction) / 10 ** len(fraction))
    return seconds


def group(
    columns: Sequence[str], rows: Sequence[Row], times: Sequence[float | None], name: str
) -> tuple[list[list[int]], str | None]:
    """The rows (their positions in ``rows``) of each GPU, and a note on how they were
    told apart where no identity column did it."""
    identity = [c for c in IDENTITY if c in columns]
    if identity or len(rows) < 2:
        found: dict[tuple[str | None, ...], list[int]] = {}
        for at, (_, row) in enumerate(rows):
            tick()
            found.setdefault(tuple(clean(row.get(c)) for c in identity), []).append(at)
        return list(found.values()), None
    known = [t for t in times if t is not None]
    count = bursts(known) if len(known) == len(rows) else 1
    if count > 1:
        first, last = rows[0][0], rows[-1][0]
        return [list(range(i, len(rows), count)) for i in range(count)], (
            f"{name}: no index, pci.bus_id or uuid column names the GPUs; the time stamps "
            f"of lines {first}-{last} come in bursts of {count} rows, one per loop over "
            f"the GPUs, so they were read as {count} GPUs, each row's GPU taken to be its "
            "place in its burst (nvidia-smi does not promise that order: add index to "
            "--query-gpu to be sure)"
        )
    fixed = [c for c in FIXED if c in columns]
    if any(len({clean(row.get(c)) for _, row in rows}) > 1 for c in fixed):
        return [[at] for at in range(len(rows))], None
    if len(known) == len(rows):
        span = max(known) - min(known)
        why = (
            f"their time stamps follow one another over {span:g} s, not in bursts of a row per GPU"
        )
    elif TIMESTAMP in columns:
        why = "and not every row has a time stamp as nvidia-smi prints it"
    else:
        why = "and no timestamp column tells one GPU's samples from the GPUs of one query"
    return [list(range(len(rows)))], (
        f"{name}: the {len(rows)} rows were read as one GPU's samples: no index, "
        f"pci.bus_id or uuid column says they are different GPUs, {why} (with several "
        "GPUs, add index to --query-gpu)"
    )


def bursts(times: Sequence[float]) -> int:
    """How many rows each loop printed: N when the rows come in bursts of N (see the
    module's docstring), else 1."""
    gaps = [later - earlier for earlier, later in pairwise(times)]
    if not gaps or min(gaps) < 0:
        return 1
    # The first gap clearly longer than every gap before it ends the first burst.
    count, longest = 1, gaps[0]
    for at, gap in enumerate(gaps[1:], start=1):
        if gap > BURST_RATIO * longest:
            count = at + 1
            break
        longest = max(longest, gap)
    if count == 1 or count > MAX_GPUS or len(times) < 2 * count:
        return 1
    ends = gaps[count - 1 :: count]
    within = [gap for at, gap in enumerate(gaps) if at % count != count - 1]
    return count if median(ends) > BURST_RATIO * median(within) else 1


def _get(data: Data, place: tuple[str, ...]) -> Any:
    """The value at ``place`` (one or two steps deep, as in Gpu)."""
    value = data.get(place[0])
    if len(place) == 1 or value is None:
        return value
    return value.get(place[1])


def _put(data: Data, place: tuple[str, ...], value: Any) -> None:
    for step in place[:-1]:
        data = data.setdefault(step, {})
    data[place[-1]] = value


def _latest(into: Data, data: Data) -> None:
    """``data``'s values over ``into``'s: a later row's value replaces an earlier one
    (``data`` itself is left as it is)."""
    for key, value in data.items():
        if isinstance(value, dict):
            if not isinstance(into.get(key), dict):
                into[key] = {}
            _latest(into[key], value)
        else:
            into[key] = value


def _reduce(how: str, values: list[Any]) -> Any:
    if how == "max":
        return max(values)
    if how == "min":
        return min(values)
    if how == "p95":  # nearest rank, as the probe's summary computes it
        ordered = sorted(values)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
    return round(mean(values), 2)


def window(readings: Sequence[Data], times: Sequence[float | None]) -> Data:
    """One GPU's data (the shape of ``Gpu``) from its rows' readings (a clock event
    reason as ``{"active": bool}``) and time stamps, in row order."""
    data: Data = {}
    for reading in readings:
        tick()
        _latest(data, reading)
    series = {place: [v for r in readings if (v := _get(r, place)) is not None] for place in SERIES}
    for place, how in SERIES.items():
        if series[place]:
            _put(data, place, _reduce(how, series[place]))
    for place, figure, how in SPREAD:
        if series[place]:
            _put(data, figure, _reduce(how, series[place]))
    shares: dict[str, list[bool]] = {}
    for reading in readings:
        for reason, state in reading.get("throttle_reasons", {}).items():
            shares.setdefault(reason, []).append(state["active"])
    if shares:
        data["throttle_reasons"] = {
            reason: {"fraction": round(sum(states) / len(states), 4)}
            for reason, states in shares.items()
        }
    first = next((t for t in times if t is not None), None)
    data["samples"] = [
        {
            "t_s": None if t is None or first is None or t < first else round(t - first, 3),
            "util_pct": _get(r, ("utilisation", "gpu_pct")),
            "sm_clock_mhz": _first(r, ("clocks", "sm_mhz"), ("clocks", "graphics_mhz")),
            "temp_c": _get(r, ("temperature", "gpu_c")),
            "power_w": _first(r, ("power", "draw_w"), ("power", "draw_instant_w")),
        }
        for r, t in zip(readings, times, strict=True)
    ]
    return data


def _first(data: Data, *places: tuple[str, ...]) -> Any:
    return next((v for place in places if (v := _get(data, place)) is not None), None)
