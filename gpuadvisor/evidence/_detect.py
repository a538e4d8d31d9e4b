"""What each evidence format looks like: one check per format, named after the module
that parses it, each true when a text (its first lines, or all of it for kernel logs)
looks like that format. :data:`gpuadvisor.evidence.formats.FORMATS` names them (the
check's name is the parser module's) and tries them in order.

The checks live apart from the parsers so that telling formats apart imports no parser,
and no model (:mod:`gpuadvisor.host.schema`): a run with three captures imports three parsers.
A check imports the helper it reads with (:mod:`._monitor`, :mod:`._sysstat`,
:mod:`._matrix`, :mod:`._query_columns`) when it first runs, and compiles its patterns
then too (``re`` keeps them), so a capture recognised early costs none of the later
checks. What a check shares with its parser (header tests, ``Key: value`` readers,
patterns) is defined here once, and the parser takes it from here.
"""

from __future__ import annotations

import re

from gpuadvisor.evidence._limits import lines
from gpuadvisor.evidence._months import MONTH_PATTERN

#: :data:`gpuadvisor.host.schema.HOST_SCHEMA`, written out so that detection does not import the
#: models (tests/test_evidence_lazy.py keeps the two equal).
HOST_SCHEMA = "gpuadvisor/host/v1"


def host_json(text: str) -> bool:
    head = text.lstrip()[:4096]
    return head.startswith("{") and HOST_SCHEMA in head


def smi_xml(text: str) -> bool:
    head = text.lstrip()[:65536]
    return head.startswith("<") and "nvidia_smi_log" in head


def smi_table(text: str) -> bool:
    return "NVIDIA-SMI" in text and re.search(r"^\|\s*GPU\s+Name", text, re.M) is not None


#: ``nvidia-smi -L`` lines: a GPU, and a MIG device under it.
SMI_LIST_GPU = r"^GPU (?P<index>\d+): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[0-9a-fA-F-]+)\)\s*$"
SMI_LIST_MIG = (
    r"^\s+MIG (?P<profile>\S+)\s+Device\s+(?P<index>\d+): \(UUID: (?P<uuid>MIG-[^)]+)\)\s*$"
)


def smi_list(text: str) -> bool:
    gpu, mig = re.compile(SMI_LIST_GPU), re.compile(SMI_LIST_MIG)
    found = [line for line in lines(text) if line.strip()]
    return bool(found) and all(gpu.match(line) or mig.match(line) for line in found)


def query_csv(text: str) -> bool:
    from gpuadvisor.evidence._query_columns import header

    return header(text) is not None


def pmon(text: str) -> bool:
    from gpuadvisor.evidence._monitor import table

    columns, _ = table(text)
    return "pid" in columns and "command" in columns


def dmon(text: str) -> bool:
    from gpuadvisor.evidence._monitor import table

    columns, rows = table(text)
    return bool(rows) and "pid" not in columns and ("sm" in columns or "pwr" in columns)


def p2p(text: str) -> bool:
    from gpuadvisor.evidence._matrix import P2P_STATUSES, read_matrix

    matrix = read_matrix(text)
    if matrix is None or not matrix.cells or "CPU Affinity" in matrix.extra:
        return False
    values = {cell for row in matrix.cells.values() for cell in row}
    return "Status Ok" in text or (values <= P2P_STATUSES and values != {"X"})


def topo(text: str) -> bool:
    from gpuadvisor.evidence._matrix import link, read_matrix

    matrix = read_matrix(text)
    if matrix is None or not matrix.cells:
        return False
    if "CPU Affinity" in matrix.extra or "Connection traversing" in text:
        return True
    values = {cell for row in matrix.cells.values() for cell in row}
    return bool(values) and all(link(cell) is not None for cell in values)


# sysstat tables: each header test gets a line's tokens and names the label column when
# the line is that table's header (see _sysstat.reports).


def iostat_header(tokens: list[str]) -> str | None:
    first = tokens[0].rstrip(":")
    return first if first == "Device" and "%util" in tokens else None


def mpstat_header(tokens: list[str]) -> str | None:
    return "CPU" if "CPU" in tokens and "%idle" in tokens and "%usr" in tokens else None


def sar_header(tokens: list[str]) -> str | None:
    return "IFACE" if "IFACE" in tokens and "rxkB/s" in tokens else None


def iostat(text: str) -> bool:
    from gpuadvisor.evidence._sysstat import reports

    return "avg-cpu:" in text or bool(reports(text, iostat_header))


def mpstat(text: str) -> bool:
    from gpuadvisor.evidence._sysstat import reports

    return bool(reports(text, mpstat_header))


def sar_net(text: str) -> bool:
    from gpuadvisor.evidence._sysstat import reports

    return bool(reports(text, sar_header))


def lscpu_fields(text: str) -> dict[str, str]:
    """``lscpu``'s ``Key: value`` lines (blank space after the colon), first one wins."""
    fields: dict[str, str] = {}
    for line in lines(text):
        key, colon, rest = line.partition(":")
        key = key.lstrip()
        if colon and key and rest[:1].isspace():
            fields.setdefault(key, rest.strip())
    return fields


def lscpu(text: str) -> bool:
    fields = lscpu_fields(text)
    return "CPU(s)" in fields and ("Socket(s)" in fields or "Architecture" in fields)


_NUMACTL_KEYS = frozenset(
    {"policy", "preferred node", "physcpubind", "cpubind", "nodebind", "membind"}
)


def numactl_fields(text: str) -> dict[str, str]:
    """``numactl --show``'s ``key: value`` lines, for the keys it prints, last one wins."""
    fields: dict[str, str] = {}
    for line in lines(text):
        key, colon, value = line.partition(":")
        if colon and key.strip() in _NUMACTL_KEYS:
            fields[key.strip()] = value.strip()
    return fields


#: ``numactl --hardware``: the node count line, and one CPU list line per node.
NUMACTL_AVAILABLE = r"^available: (?P<count>\d+) nodes? \((?P<nodes>[^)\n]*)\)\s*$"
NUMACTL_NODE = r"^node (?P<node>\d+) (?P<what>cpus|size|free):(?P<value>[^\n]*)$"


def numactl(text: str) -> bool:
    """``numactl --show`` (policy and binding), ``numactl --hardware`` (nodes), or both."""
    fields = numactl_fields(text)
    if "policy" in fields and ("physcpubind" in fields or "membind" in fields):
        return True
    return (
        re.search(NUMACTL_AVAILABLE, text, re.M) is not None
        and re.search(r"^node \d+ cpus:", text, re.M) is not None
    )


def dcgm(text: str) -> bool:
    return "DCGM_FI_" in text and any(
        line.startswith("DCGM_FI_") for line in text.splitlines()[:400]
    )


# Kernel-log messages (the parser reads events from lines these find).
XID = r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9a-fA-F:.]+)\): (?P<code>\d+)(?:, (?P<rest>.*))?"
#: A lost GPU said in one line without an Xid: older drivers' "NVRM: GPU at 0000:01:00.0
#: has fallen off the bus.", and the line the driver prints right after an Xid 79, "NVRM:
#: GPU 0000:01:00.0: GPU has fallen off the bus." (osHandleGpuLost in
#: open-gpu-kernel-modules, src/nvidia/arch/nvalloc/unix/src/osinit.c: NV_DEV_PRINTF puts
#: the bus id and a colon before the text). The bus id stops before that colon.
OFF_BUS = (
    r"NVRM: GPU (?:at )?(?:PCI:)?"
    r"(?P<bus>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)"
    r":? (?:GPU )?has fallen off the bus"
)
#: Since driver 570 (and in the probe routine of older ones) a lost GPU is one message
#: printed over three lines, without an Xid: "NVRM: The NVIDIA GPU 0000:b3:00.0" /
#: "NVRM: (PCI ID: 10de:26b5) installed in this system has" / "NVRM: fallen off the bus
#: and is not responding to commands." (open-gpu-kernel-modules, nv.c).
LOST_START = r"NVRM: The NVIDIA GPU (?P<bus>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
LOST_END = "fallen off the bus and is not responding to commands"
#: The kernel's AER severities: "Corrected", "Uncorrected (Non-Fatal)", "Uncorrected
#: (Fatal)"; since Linux 6.x also "Correctable" and "Uncorrectable (...)".
AER_DETAIL = r"PCIe Bus Error: severity=(?P<severity>[^,]+)"
# The parenthesised part is bounded ("(Non-Fatal)", "(Fatal)"): unbounded, a line of
# repeated "AER: Uncorrected (" makes every search scan to the end, quadratically.
AER_RECEIVED = (
    r"AER: (?:Multiple )?(?P<severity>Corrected|Correctable|Uncorrected \([^)\n]{0,40}\)"
    r"|Uncorrectable \([^)\n]{0,40}\))"
    r" error (?:message )?received(?: from)?:? (?P<bus>[0-9a-fA-F:.]+)"
)
#: Lines only kernel logs start with: dmesg's [seconds] / [ctime] (in any language),
#: dmesg --time-format iso (comma before the microseconds), --decode's facility prefix,
#: journalctl's "host kernel:" and its "-- ... --" markers.
_KERNEL_LINE = (
    r"^(?:\[\s*\d+\.\d+\]"
    r"|\[[^\W\d_]{1,6}\.? +" + MONTH_PATTERN + r" +\d{1,2} \d\d:\d\d:\d\d \d{4}\]"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d,\d+[+-]\d\d:\d\d"
    r"|[a-z]+\s*:[a-z]+\s*: | ?\S.*? \S+ kernel: |-- .* --$)"
)


def kernel_log(text: str) -> bool:
    """Xid, lost-GPU or AER lines anywhere, or (a log of a healthy host) lines shaped
    like a kernel log's: most of the first hundred."""
    if re.search(XID, text) or re.search(OFF_BUS, text):
        return True
    if LOST_END in text and re.search(LOST_START, text):
        return True
    if re.search(AER_DETAIL, text) or re.search(AER_RECEIVED, text):
        return True
    return kernel_shaped(text)


#: The words of a line a person pastes into a log to show a cut: "[...snip...]", "...",
#: "-- snip --", "<cut>", "[ 42 lines omitted ]" (a number only beside "lines"). Such a
#: line, like a blank one, says nothing about the format either way. Marks are short: a
#: longer line is never one (and is not scanned).
_MARKER_WORDS = frozenset(
    {"snip", "snipped", "cut", "trimmed", "truncated", "omitted", "elided", "redacted"}
    | {"line", "lines", "more", "output"}
)
_MARKER_LENGTH = 80


def pasted_marker(line: str) -> bool:
    """A line that only marks where a person cut the log (see :data:`_MARKER_WORDS`)."""
    if len(line) > _MARKER_LENGTH:
        return False
    words = [w.lower() for w in re.findall(r"[^\W_]+", line)]
    counted = not {"line", "lines"}.isdisjoint(words)  # "[ 42 lines omitted ]"
    return all(w in _MARKER_WORDS or (counted and w.isdigit()) for w in words)


def kernel_shaped(text: str) -> bool:
    """Most of the first hundred lines start the way kernel-log lines do.

    A message printed over several lines (a lost GPU, a register dump) has its later
    lines indented under the first, with no stamp of their own: they belong to the
    line above and are not counted either way; nor are blank lines and the marks a
    person leaves where they cut the log (:func:`pasted_marker`). One foreign line
    beside two or more kernel lines is allowed whatever the share, so that a log of
    three lines does not hinge on one pasted line (a prompt, a heading).
    """
    kernel_line = re.compile(_KERNEL_LINE)
    counted = kernel = 0
    previous = False
    for line in text.splitlines()[:100]:
        if not line.strip() or pasted_marker(line):
            continue
        if previous and line[:1].isspace():
            continue
        previous = kernel_line.match(line) is not None
        counted += 1
        kernel += previous
    foreign = counted - kernel
    return counted > 0 and (kernel >= 0.8 * counted or (kernel >= 2 and foreign == 1))


#: ``nvidia-smi -q`` labels (normalised); two of them make a ``-q`` report or excerpt.
_SMI_Q_LABELS = frozenset(
    {
        "product name",
        "bus id",
        "pcie generation",
        "link width",
        "ecc mode",
        "ecc errors",
        "retired pages",
        "remapped rows",
        "gpu current temp",
        "gpu shutdown temp",
        "gpu slowdown temp",
        "power readings",
        "gpu power readings",
        "power draw",
        "clocks event reasons",
        "clocks throttle reasons",
        "fb memory usage",
        "persistence mode",
        "performance state",
        "gpu uuid",
        "attached gpus",
    }
)


def smi_text(text: str) -> bool:
    if "NVSMI LOG" in text[:4096]:
        return True
    found = set()
    for line in text.splitlines()[:2000]:
        # Normalised as _qtree.normalise does: lower case, single spaces.
        label = " ".join(line.split(":", 1)[0].lower().split())
        if label in _SMI_Q_LABELS:
            found.add(label)
            if len(found) >= 2:
                return True
    return False
