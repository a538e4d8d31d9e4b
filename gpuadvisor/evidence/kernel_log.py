"""Kernel logs: ``dmesg`` (raw, ``-T``/``--ctime``, ``--time-format iso``, ``--decode``)
and ``journalctl -k`` (short, short-precise, short-iso), for NVIDIA Xid, lost GPUs and
PCIe AER.

One event per Xid report: an ``NVRM: Xid`` line, and the lines a driver prints after it
(GSP RPC history, stack traces) are context, not further events. An Xid 13 report is
printed as several Xid 13 lines for one fault (``Graphics SM Warp Exception``, then
``Graphics SM Global Exception``, ``Graphics Exception: ESR ...`` and on older drivers
``Graphics Exception: ChID ...``): they make one event.

A GPU that has fallen off the bus has one meaning and one representation, whichever
driver wrote the log:

- an ``NVRM: Xid (...): 79`` line is an ``xid`` event with code 79, as logged (Xid
  codes are never made up from other lines);
- a "fallen off the bus" message that is not an Xid line is a ``gpu-lost`` event, in
  each of its wordings: older drivers' one line ``NVRM: GPU at 0000:01:00.0 has fallen
  off the bus.``, the line the driver prints right after an Xid 79 ``NVRM: GPU
  0000:01:00.0: GPU has fallen off the bus.``, and the three-line message of driver
  570+ and of every driver's probe routine (``NVRM: The NVIDIA GPU 0000:b3:00.0`` ...
  ``fallen off the bus and is not responding to commands.``);
- a GPU stays off the bus until the host restarts, so within one boot these messages
  make one loss per GPU: repeats add nothing, and a GPU with an Xid 79 in that boot
  gets no ``gpu-lost`` event (the message is the Xid's companion, merged into it). A
  boot ends at the kernel's ``Linux version`` banner, at journalctl's ``-- Boot ... --``
  / ``-- Reboot --`` markers, and where dmesg's seconds since boot go back.

:mod:`gpuadvisor.engine.hostfacts` counts Xid events as logged (``host.xid_*``) and
GPUs lost once each, from either kind (``host.gpu_lost_count``).

For AER, one event per ``PCIe Bus Error: severity=...`` line (the detail line every
error prints); when a capture kept only the ``AER: ... error received`` lines, those
are counted instead. The AER trace event that ``tp_printk`` echoes into the log
(``aer_event: ...``) repeats an error already counted and is skipped.

Time stamps keep the log's own form when it has no year (``Jan 21 09:57:01``); a month
named in another language (``июл 27 14:08:03``) is read as its English name, with a
note, and an ISO time where the stamp has a year.
"""

from __future__ import annotations

import re
from datetime import datetime

from gpuadvisor.evidence import _detect
from gpuadvisor.evidence._limits import lines
from gpuadvisor.evidence._months import ENGLISH, MONTH_PATTERN, month_number
from gpuadvisor.host.schema import AerSeverity, Event, HostSnapshot
from gpuadvisor.nvidia.values import bus_id, integer, whole
from gpuadvisor.nvidia.xid import classify

_FACILITY = r"(?:[a-z]+\s*:\s*[a-z]+\s*:\s*)?"
_PREFIX = re.compile(
    r"^" + _FACILITY + r"(?:"
    r"\[\s*(?P<mono>\d+\.\d+)\]"
    r"|\[(?P<ctime>[^\W\d_]{1,6}\.? +" + MONTH_PATTERN + r" +\d{1,2} \d\d:\d\d:\d\d \d{4})\]"
    r"|(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:[+-]\d\d:?\d\d|Z)?)"
    r"|(?P<syslog> ?" + MONTH_PATTERN + r" +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?)"
    r")\s*(?:\S+ kernel:\s*)?"
)
_XID = re.compile(_detect.XID)
_PID = re.compile(r"pid=(?:'?<unknown>'?|(?P<pid>\d+))(?:, name=(?P<name>[^,]*))?")
_DEVICE = re.compile(r"(?:^|\s)(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):? ")
_OFF_BUS = re.compile(_detect.OFF_BUS)
_LOST_START = re.compile(_detect.LOST_START)
_AER_DETAIL = re.compile(_detect.AER_DETAIL)
_AER_RECEIVED = re.compile(_detect.AER_RECEIVED)
#: Where a new boot starts: the kernel's banner, and journalctl's markers between boots.
_BOOT = re.compile(r"^(?:Linux version |-- Boot [0-9a-f]+ --|-- Reboot --)")
MAX_TEXT = 500
#: Lines a lost-GPU message may take after its first.
_LOST_LINES = 3
#: The parts of one Xid 13 report, in the order the driver prints them; a line with a
#: later part than the report's last continues it, any other Xid 13 line starts a new one.
_XID13_PARTS = (
    "Graphics SM Warp Exception",
    "Graphics SM Global Exception",
    "Graphics Exception: ESR",
    "Graphics Exception: ChID",
)


def _severity(text: str) -> AerSeverity | None:
    lowered = text.strip().lower()
    if lowered.startswith(("corrected", "correctable")):
        return "corrected"
    if lowered.startswith(("uncorrected", "uncorrectable")):
        if "non-fatal" in lowered:
            return "uncorrected-nonfatal"
        if "fatal" in lowered:
            return "uncorrected-fatal"
    return None


class _Lost:
    """A lost-GPU message seen so far: its first line and those after it. (Plain
    classes here, not dataclasses: defining one costs about half a millisecond.)"""

    __slots__ = ("bus", "parts", "time", "where")

    def __init__(self, bus: str | None, time: str | None, where: str) -> None:
        self.bus = bus
        self.time = time
        self.where = where
        self.parts: list[str] = []


class _Log:
    """What one pass over the lines has found."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.xids: list[Event] = []
        self.details: list[Event] = []
        self.received: list[Event] = []
        #: Lost-GPU messages with the boot they were logged in, and the (boot, GPU) of
        #: each Xid 79.
        self.lost: list[tuple[int, Event]] = []
        self.xid_lost: set[tuple[int, str | None]] = set()
        self.boot = 0
        self.seconds: float | None = None
        self.notes: list[str] = []
        #: The last Xid event's code, GPU and process, and how far an Xid 13 report's
        #: parts have got.
        self.last_xid: tuple[str, int] | None = None
        self.pending: _Lost | None = None
        #: Month words already noted.
        self.months: set[str] = set()

    def time(self, match: re.Match[str], number: int) -> str | None:
        if match.group("ctime"):
            return self._ctime(match.group("ctime"), number)
        if match.group("iso"):
            return match.group("iso").replace(",", ".")
        if match.group("syslog"):
            stamp = match.group("syslog").strip()
            token, _, rest = stamp.partition(" ")
            english = self._english(token, stamp, number)
            return stamp if english in (None, token) else f"{english} {rest.lstrip()}"
        return match.group("mono")

    def _ctime(self, stamp: str, number: int) -> str:
        parts = stamp.split()
        shown = " ".join(parts)
        _, token, day, clock, year = parts
        english = self._english(token, shown, number)
        if english is None:
            return shown
        hour, minute, second = (int(p) for p in clock.split(":"))
        try:
            return datetime(
                int(year), ENGLISH.index(english) + 1, int(day), hour, minute, second
            ).isoformat()
        except ValueError:  # "Feb 30", "25:61:00": keep what the log says
            return shown

    def _english(self, token: str, stamp: str, number: int) -> str | None:
        """The English name of the month ``token``; None (and a note) for a word that
        names no month."""
        month = month_number(token)
        if month is None:
            if token not in self.months:
                self.months.add(token)
                self.notes.append(
                    f"{self.name}:{number}: {token!r} in the time stamp {stamp!r} is not a "
                    "month name gpuadvisor knows; the stamp is kept as the log prints it"
                )
            return None
        english = ENGLISH[month - 1]
        if token != english and token not in self.months:
            self.months.add(token)
            self.notes.append(
                f"{self.name}: time stamps name the month {token!r}, read as {english}"
            )
        return english

    def line(self, number: int, line: str) -> None:
        prefix = _PREFIX.match(line)
        message = line[prefix.end() :] if prefix else line.strip()
        self._boot(prefix, message)
        # The stamp and the place are worked out only for the lines that make events:
        # most lines of a log make none.
        xid = _XID.search(message)
        if xid:
            self.pending = None
            self._xid(xid, message, self._when(prefix, number), f"{self.name}:{number}")
            return
        if self.pending is not None and self._continue_lost(message):
            return
        start = _LOST_START.search(message)
        if start:
            self.pending = _Lost(
                bus_id(start.group("bus")), self._when(prefix, number), f"{self.name}:{number}"
            )
            self._continue_lost(message[start.start() :])
            return
        off_bus = _OFF_BUS.search(message)
        if off_bus:
            self._lost(
                bus_id(off_bus.group("bus")),
                self._when(prefix, number),
                message[off_bus.start() :],
                f"{self.name}:{number}",
            )
            return
        if message.startswith("aer_event:"):
            return
        detail = _AER_DETAIL.search(message)
        if detail:
            device = _DEVICE.search(message)
            bus = device.group("bus") if device else None
            self.details.append(self._aer(detail, bus, message, prefix, number))
            return
        got = _AER_RECEIVED.search(message)
        if got:
            self.received.append(self._aer(got, got.group("bus"), message, prefix, number))

    def _boot(self, prefix: re.Match[str] | None, message: str) -> None:
        """Count a boot boundary: a banner or marker line, or dmesg's seconds going back."""
        if _BOOT.match(message):
            self.boot += 1
            self.seconds = None
            return
        mono = prefix.group("mono") if prefix else None
        if mono is not None:
            seconds = float(mono)
            if self.seconds is not None and seconds < self.seconds:
                self.boot += 1
            self.seconds = seconds

    def _lost(self, bus: str | None, time: str | None, text: str, where: str) -> None:
        event = Event(
            kind="gpu-lost", pci_bus_id=bus, time=time, text=text[:MAX_TEXT], source=where
        )
        self.lost.append((self.boot, event))

    def _when(self, prefix: re.Match[str] | None, number: int) -> str | None:
        return self.time(prefix, number) if prefix else None

    def _continue_lost(self, message: str) -> bool:
        """Add a line to the lost-GPU message under way; False when the line is not
        part of it (which ends it)."""
        pending = self.pending
        assert pending is not None
        part = message.strip()
        if not part.startswith("NVRM:") or len(pending.parts) > _LOST_LINES:
            self.pending = None
            return False
        pending.parts.append(part if not pending.parts else part[len("NVRM:") :].strip())
        whole_text = " ".join(pending.parts)
        if _detect.LOST_END in whole_text:
            self._lost(pending.bus, pending.time, whole_text, pending.where)
            self.pending = None
        return True

    def _xid(self, xid: re.Match[str], message: str, time: str | None, where: str) -> None:
        code = whole(xid.group("code"))
        rest = xid.group("rest") or ""
        owner = _PID.search(rest)
        detail = rest[owner.end() :].lstrip(", ") if owner else rest
        bus = bus_id(xid.group("bus"))
        key = f"{code} {bus} {owner.group(0) if owner else ''}"
        part = next((i for i, p in enumerate(_XID13_PARTS) if detail.startswith(p)), None)
        if (
            code == 13
            and part is not None
            and self.last_xid is not None
            and self.last_xid[0] == key
            and part > self.last_xid[1]
        ):
            report = self.xids[-1]
            text = f"{report.text} / {detail}"[:MAX_TEXT]
            self.xids[-1] = report.model_copy(update={"text": text})
            self.last_xid = (key, part)
            return
        self.last_xid = (key, -1 if part is None else part)
        if code == 79:
            self.xid_lost.add((self.boot, bus))
        self.xids.append(
            Event(
                kind="xid",
                code=code,
                pci_bus_id=bus,
                time=time,
                text=message[xid.start() :][:MAX_TEXT],
                xid_class=classify(code),
                pid=integer(owner.group("pid")) if owner and owner.group("pid") else None,
                process=_name(owner.group("name")) if owner else None,
                source=where,
            )
        )

    def _aer(
        self,
        match: re.Match[str],
        bus: str | None,
        message: str,
        prefix: re.Match[str] | None,
        number: int,
    ) -> Event:
        where = f"{self.name}:{number}"
        severity = _severity(match.group("severity"))
        if severity is None:
            self.notes.append(
                f"{where}: AER severity {match.group('severity').strip()!r} is not one the "
                "kernel prints; the error is kept without a severity"
            )
        return Event(
            kind="aer",
            pci_bus_id=bus_id(bus),
            time=self._when(prefix, number),
            text=message[match.start() :][:MAX_TEXT],
            xid_class="hardware",
            severity=severity,
            source=where,
        )

    def events(self) -> list[Event]:
        # One loss per GPU and boot: the first message of a GPU with no Xid 79 in that
        # boot (see the module's docstring).
        reported = set(self.xid_lost)
        lost: list[Event] = []
        for boot, event in self.lost:
            if (boot, event.pci_bus_id) not in reported:
                lost.append(event)
                reported.add((boot, event.pci_bus_id))
        return [*self.xids, *lost, *(self.details or self.received)]


def parse(text: str, name: str) -> HostSnapshot:
    log = _Log(name)
    for number, line in enumerate(lines(text), start=1):
        log.line(number, line)
    return HostSnapshot(events=log.events(), notes=log.notes)


def _name(value: str | None) -> str | None:
    text = (value or "").strip()
    return None if not text or text in ("<unknown>", "'<unknown>'") else text
