"""What reading one evidence file may cost, and what a value in it may be.

Captures come from strangers (pasted into tickets, attached to e-mails), so the parsers
are written to be linear in the size of the text: no regular expression can backtrack
catastrophically, and nothing loops over pairs of GPUs without a bound on their number.
Two limits back that up:

- :data:`PARSE_SECONDS`: a wall-clock limit on detecting and parsing one file. It is
  cooperative (portable, no signals or threads): the parsers' loops go through
  :func:`lines` and :func:`tick`, which look at the clock every few thousand steps, so
  the bound is the limit plus the longest step between two looks (one regular
  expression over one line, linear in the line). A parser that outruns it ends with an
  InputError naming the file and the line it had reached.
- :data:`MAX_GPUS` / :data:`MAX_DEVICES`: more GPUs, or more devices in a topology
  matrix, than any single host has is refused rather than read, because merging and
  matrices grow with their square.

A value no tool prints (a temperature of ``1e999``, a 5000-digit index) is
:class:`gpuadvisor.nvidia.values.BadValue`; the loader turns it into an InputError
naming the file and the line.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: Seconds one evidence file may take to detect and parse. A 16 MiB capture (the
#: input limit) of any supported format reads in a few seconds.
PARSE_SECONDS = 30.0

#: GPUs one host may have (one file, or all files merged). Real hosts have at most a
#: few dozen; MIG devices are counted separately.
MAX_GPUS = 1024

#: Devices (GPUs, NICs, CPUs) one ``topo -m`` / ``topo -p2p`` matrix may have.
MAX_DEVICES = 256

_CHECK_EVERY = 2048


class ParseTimeout(Exception):
    """Parsing one file ran past :data:`PARSE_SECONDS`."""

    def __init__(self, line: int | None) -> None:
        super().__init__("parsing ran past its time limit")
        self.line = line


class TooMany(Exception):
    """More GPUs or devices than one host has."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class _Clock:
    """The deadline of the file being read, and how far its parser got. A plain class,
    not a dataclass: defining one costs about half a millisecond, on every run."""

    __slots__ = ("deadline", "line", "ticks")

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.line = 0
        self.ticks = 0


_clock: ContextVar[_Clock | None] = ContextVar("gpuadvisor_parse_clock", default=None)


@contextmanager
def time_limit(seconds: float | None = None) -> Iterator[None]:
    """Run the block under a parse deadline (``seconds``, default PARSE_SECONDS)."""
    limit = PARSE_SECONDS if seconds is None else seconds
    token = _clock.set(_Clock(time.monotonic() + limit))
    try:
        yield
    finally:
        _clock.reset(token)


def _check(clock: _Clock) -> None:
    if time.monotonic() > clock.deadline:
        raise ParseTimeout(clock.line or None)


def lines(text: str) -> Iterator[str]:
    """``text.splitlines()``, looking at the deadline every few thousand lines and
    remembering how far the parser got (for the message if it runs out of time)."""
    clock = _clock.get()
    for number, line in enumerate(text.splitlines(), start=1):
        if clock is not None and number % _CHECK_EVERY == 0:
            clock.line = max(clock.line, number)
            _check(clock)
        yield line


def tick() -> None:
    """One step of an inner loop that does not walk lines (pairs of devices, merges)."""
    clock = _clock.get()
    if clock is None:
        return
    clock.ticks += 1
    if clock.ticks % _CHECK_EVERY == 0:
        _check(clock)


def check_gpus(count: int) -> None:
    """Refuse, before building them, more GPUs than one host has."""
    if count > MAX_GPUS:
        raise TooMany(f"{count} GPUs in one host; gpuadvisor reads at most {MAX_GPUS}")


def line_of(text: str, token: str) -> int | None:
    """The 1-based line where ``token`` first appears in ``text``, if it does."""
    at = text.find(token) if token else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else None
