"""Kernel logs: ``dmesg`` (raw, ``-T``/``--ctime``, ``--time-format iso``, ``--decode``)
and ``journalctl -k`` (short, short-precise, short-iso), for NVIDIA Xid and PCIe AER.

One event per ``NVRM: Xid`` line; the lines a driver prints after it (GSP RPC history,
stack traces) are context, not further events. For AER, one event per ``PCIe Bus Error:
severity=...`` line (the detail line every error prints); when a capture kept only the
``AER: ... error received`` lines, those are counted instead.
"""

from __future__ import annotations

import re
from datetime import datetime

from gpuadvisor.evidence import _detect
from gpuadvisor.evidence._limits import lines
from gpuadvisor.host.schema import AerSeverity, Event, HostSnapshot
from gpuadvisor.nvidia.values import bus_id, integer, whole
from gpuadvisor.nvidia.xid import classify

_FACILITY = r"(?:[a-z]+\s*:\s*[a-z]+\s*:\s*)?"
_PREFIX = re.compile(
    r"^" + _FACILITY + r"(?:"
    r"\[\s*(?P<mono>\d+\.\d+)\]"
    r"|\[(?P<ctime>[A-Z][a-z]{2} [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d \d{4})\]"
    r"|(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:[+-]\d\d:?\d\d|Z)?)"
    r"|(?P<syslog>[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?)"
    r")\s*(?:\S+ kernel:\s*)?"
)
_XID = re.compile(_detect.XID)
_PID = re.compile(r"pid=(?:'?<unknown>'?|(?P<pid>\d+))(?:, name=(?P<name>[^,]*))?")
_DEVICE = re.compile(r"(?:^|\s)(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):? ")
_OFF_BUS = re.compile(_detect.OFF_BUS)
_AER_DETAIL = re.compile(_detect.AER_DETAIL)
_AER_RECEIVED = re.compile(_detect.AER_RECEIVED)
MAX_TEXT = 500


def _time(match: re.Match[str]) -> str | None:
    if match.group("ctime"):
        stamp = " ".join(match.group("ctime").split())
        try:
            return datetime.strptime(stamp, "%a %b %d %H:%M:%S %Y").isoformat()
        except ValueError:  # "Feb 30", "25:61:00": keep what the log says
            return stamp
    if match.group("iso"):
        return match.group("iso").replace(",", ".")
    return match.group("mono") or match.group("syslog")


def _severity(text: str) -> AerSeverity:
    lowered = text.lower()
    if lowered.startswith("corrected"):
        return "corrected"
    return "uncorrected-nonfatal" if "non-fatal" in lowered else "uncorrected-fatal"


def parse(text: str, name: str) -> HostSnapshot:
    xids: list[Event] = []
    details: list[Event] = []
    received: list[Event] = []
    lost: list[Event] = []
    for number, line in enumerate(lines(text), start=1):
        prefix = _PREFIX.match(line)
        time = _time(prefix) if prefix else None
        message = line[prefix.end() :] if prefix else line.strip()
        where = f"{name}:{number}"
        xid = _XID.search(message)
        if xid:
            xids.append(_xid_event(xid, message, time, where))
            continue
        off_bus = _OFF_BUS.search(message)
        if off_bus:
            lost.append(
                Event(
                    kind="xid",
                    code=79,
                    pci_bus_id=bus_id(off_bus.group("bus")),
                    time=time,
                    text=message[off_bus.start() :][:MAX_TEXT],
                    xid_class=classify(79),
                    source=where,
                )
            )
            continue
        detail = _AER_DETAIL.search(message)
        if detail:
            device = _DEVICE.search(message)
            bus = device.group("bus") if device else None
            details.append(_aer_event(detail, bus, message, time, where))
            continue
        got = _AER_RECEIVED.search(message)
        if got:
            received.append(_aer_event(got, got.group("bus"), message, time, where))
    # "GPU has fallen off the bus" without an Xid 79 line for that GPU still is one.
    reported = {e.pci_bus_id for e in xids if e.code == 79}
    for event in lost:
        if event.pci_bus_id not in reported:
            xids.append(event)
            reported.add(event.pci_bus_id)
    return HostSnapshot(events=[*xids, *(details or received)])


def _aer_event(
    match: re.Match[str], bus: str | None, message: str, time: str | None, where: str
) -> Event:
    return Event(
        kind="aer",
        pci_bus_id=bus_id(bus),
        time=time,
        text=message[match.start() :][:MAX_TEXT],
        xid_class="hardware",
        severity=_severity(match.group("severity")),
        source=where,
    )


def _name(value: str | None) -> str | None:
    text = (value or "").strip()
    return None if not text or text in ("<unknown>", "'<unknown>'") else text


def _xid_event(xid: re.Match[str], message: str, time: str | None, where: str) -> Event:
    code = whole(xid.group("code"))
    rest = xid.group("rest") or ""
    owner = _PID.search(rest)
    return Event(
        kind="xid",
        code=code,
        pci_bus_id=bus_id(xid.group("bus")),
        time=time,
        text=message[xid.start() :][:MAX_TEXT],
        xid_class=classify(code),
        pid=integer(owner.group("pid")) if owner and owner.group("pid") else None,
        process=_name(owner.group("name")) if owner else None,
        source=where,
    )
