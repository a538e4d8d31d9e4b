"""Turning the strings tools print into typed values, the same way for every format.

nvidia-smi writes "not available" in many spellings (``N/A``, ``[N/A]``,
``[Not Supported]``, ``ERR!``, ``Unknown Error``, ``Requested functionality has been
deprecated``, ...). All of them become ``None``: the value was not reported.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the models are not needed to read values (detection uses these)
    from gpuadvisor.host.schema import Mode

#: Largest whole number a capture may hold: NVML counters are unsigned 64-bit.
MAX_WHOLE = 2**64 - 1


class BadValue(ValueError):
    """A value no tool prints: not finite, or too large for what it counts. The evidence
    loader turns it into an InputError naming the file and the line."""

    def __init__(self, token: str, problem: str) -> None:
        super().__init__(f"{token!r} {problem}")
        self.token = token
        self.problem = problem

    @property
    def shown(self) -> str:
        """The value as a message quotes it: a 5000-digit number is cut short."""
        return repr(self.token if len(self.token) <= 40 else self.token[:36] + "...")


_MISSING = {
    "",
    "-",
    "n/a",
    "na",
    "none",
    "not supported",
    "not available",
    "err!",
    "unknown",
    "unknown error",
    "insufficient permissions",
    "gpu is lost",
    "gpu requires reset",
    "requested functionality has been deprecated",
}
#: A number at the start of a value, then a unit or the end: "67.03 W", "72W", "27C".
#: The whole number is read or nothing is: "1e400" is not 1, "1,024" is not 1, and
#: "12.5.6" is not 12.5 (those are None, or an error when the number is not finite).
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?![\d.,])")
#: Spellings of values no measurement has; nvidia-smi prints none of them.
_NOT_FINITE = frozenset({"nan", "inf", "infinity"})
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def clean(value: str | None) -> str | None:
    """The value with brackets and whitespace removed, or None when it means 'absent'."""
    if value is None:
        return None
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    lowered = text.lower()
    if lowered in _MISSING or lowered.startswith("not available in"):
        return None
    return text


def number(value: str | None) -> float | None:
    """The leading number of ``value`` (``"67.03 W"`` -> 67.03), None when absent."""
    text = clean(value)
    if text is None:
        return None
    match = _NUMBER.match(text)
    if match is None:
        if text.lower().lstrip("+-") in _NOT_FINITE:
            raise BadValue(text, "is not a finite number")
        return None
    result = float(match.group(0))
    if not math.isfinite(result):
        raise BadValue(match.group(0), "is not a finite number")
    return result


def integer(value: str | None) -> int | None:
    result = number(value)
    if result is None:
        return None
    if abs(result) > MAX_WHOLE:
        raise BadValue(str(value).strip(), "is too large for a count or an index")
    return round(result)


def whole(digits: str) -> int:
    """``int(digits)`` for text a pattern matched as digits, refusing what no tool
    prints (Python would refuse 4300 digits with a ValueError of its own)."""
    if len(digits) > 20 or int(digits) > MAX_WHOLE:
        raise BadValue(digits[:40], "is too large for a count or an index")
    return int(digits)


def whole_or_none(text: str | None) -> int | None:
    """A non-negative whole number written in ASCII digits, else None.

    ``str.isdigit`` is true for "²" and "٣", which ``int`` refuses or reads as another
    script's digits; captures only ever hold ASCII digits.
    """
    if text is None or not (text.isascii() and text.isdigit()):
        return None
    return whole(text)


def link_width(value: str | None) -> int | None:
    """``"16x"``, ``"x16"`` or ``"16"`` -> 16."""
    text = clean(value)
    if text is None:
        return None
    return integer(text.lower().replace("x", ""))


def pcie_gen(value: str | None) -> int | None:
    """``"4"`` or ``"Gen4"`` -> 4."""
    text = clean(value)
    if text is None:
        return None
    return integer(re.sub(r"(?i)^gen", "", text))


def active(value: str | None) -> bool | None:
    """Clock event reason state: ``Active`` / ``Not Active``."""
    text = clean(value)
    if text is None:
        return None
    lowered = text.lower()
    if lowered == "active":
        return True
    if lowered == "not active":
        return False
    return None


def yes_no(value: str | None) -> bool | None:
    text = clean(value)
    if text is None:
        return None
    lowered = text.lower()
    if lowered in ("yes", "enabled", "on", "true", "1"):
        return True
    if lowered in ("no", "disabled", "off", "false", "0"):
        return False
    return None


def mode(value: str | None, *, section_present: bool = True) -> Mode | None:
    """ECC or MIG mode. nvidia-smi prints N/A when NVML answers NOT_SUPPORTED, so a
    mode field that is present but N/A means the GPU lacks the feature."""
    if value is None:
        return None
    text = clean(value)
    if text is None:
        stripped = value.strip().strip("[]").lower()
        if section_present and stripped in ("n/a", "not supported"):
            return "unsupported"
        return None
    lowered = text.lower()
    if lowered == "enabled":
        return "enabled"
    if lowered == "disabled":
        return "disabled"
    return None


_BUS_ID = re.compile(
    r"^(?:PCI:)?(?:(?P<domain>[0-9a-fA-F]{1,8}):)?(?P<bus>[0-9a-fA-F]{1,2}):"
    r"(?P<device>[0-9a-fA-F]{1,2})(?:\.(?P<function>[0-7]))?$"
)


def bus_id(value: str | None) -> str | None:
    """Canonical PCI address ``00000000:17:00.0`` from any spelling nvidia-smi, the
    kernel or DCGM use (``0000:17:00.0``, ``PCI:0000:17:00``, ``17:00.0``).

    Xid lines omit the PCI function; NVIDIA GPUs are function 0, so it is filled in.
    """
    text = clean(value)
    if text is None:
        return None
    match = _BUS_ID.match(text.strip())
    if match is None:
        return None
    domain = int(match.group("domain") or "0", 16)
    bus = int(match.group("bus"), 16)
    device = int(match.group("device"), 16)
    function = int(match.group("function") or "0")
    return f"{domain:08X}:{bus:02X}:{device:02X}.{function}"


def pstate(value: str | None) -> str | None:
    text = clean(value)
    if text is None:
        return None
    match = re.match(r"^P?(\d{1,2})$", text.upper())
    return f"P{int(match.group(1))}" if match else None


def sum_known(values: list[int | None]) -> int | None:
    """Sum of the values that were reported; None when none was."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


#: CPU and NUMA node ids above this are not real (Linux allows 8192 CPUs).
MAX_CPU_ID = 65535


def cpu_list(value: str) -> list[int] | None:
    """``"0 1 2 8-11"`` or ``"0-3,8"`` -> [0, 1, 2, 3, 8]; None when it is not a list
    of CPU ids (or lists more ids than a host has)."""
    result: list[int] = []
    for part in re.split(r"[\s,]+", value.strip()):
        if not part:
            continue
        low_text, dash, high_text = part.partition("-")
        low = whole_or_none(low_text) if len(low_text) <= 6 else None
        high = (whole_or_none(high_text) if len(high_text) <= 6 else None) if dash else low
        if low is None or high is None or high < low or high > MAX_CPU_ID:
            return None
        if len(result) + high - low >= MAX_CPU_ID + 1:
            return None
        result.extend(range(low, high + 1))
    return result
