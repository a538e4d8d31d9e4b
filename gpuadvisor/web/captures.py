"""Uploaded captures kept for the report page, and the warning when they seem to come
from different machines.

The answers travel in the page (:mod:`.tokens`), but captures can be megabytes: too
much for an address. So that the report page can be reloaded, reached with the
browser's Back button and made again after an answer is changed, the captures of one
upload are kept in memory under an unguessable name (128 random bits) that only the
uploader's page carries. The store is bounded (:data:`MAX_UPLOADS` uploads,
:data:`MAX_BYTES` in all, each kept :data:`KEEP_SECONDS`), oldest dropped first; a
report whose captures were dropped asks for them again. Nothing else about anyone is
kept, and nothing is written to disk but the per-request copies of :mod:`.uploads`.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gpuadvisor.decision.model import EvidenceConflict

#: Uploads kept at once, bytes kept in all, and for how long.
MAX_UPLOADS: Final = 128
MAX_BYTES: Final = 64 * 1024 * 1024
KEEP_SECONDS: Final = 2 * 60 * 60


@dataclass(frozen=True)
class Kept:
    """One upload's captures: (name cited, bytes) each, and why they may not belong
    together (empty when they do)."""

    files: tuple[tuple[str, bytes], ...]
    warning: str

    @property
    def size(self) -> int:
        return sum(len(data) for _, data in self.files)


class CaptureStore:
    """The bounded store of the module docstring; safe to use from several threads."""

    def __init__(
        self,
        *,
        max_uploads: int = MAX_UPLOADS,
        max_bytes: int = MAX_BYTES,
        keep_seconds: float = KEEP_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_uploads = max_uploads
        self.max_bytes = max_bytes
        self.keep_seconds = keep_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, tuple[float, Kept]] = OrderedDict()
        self._bytes = 0

    def put(self, kept: Kept) -> str | None:
        """The name ``kept`` is found by, or None when it is larger than the whole
        store (the report is then made once, and asks for the captures again later)."""
        if kept.size > self.max_bytes:
            return None
        name = secrets.token_urlsafe(16)
        with self._lock:
            self._expire()
            while self._kept and (
                len(self._kept) >= self.max_uploads or self._bytes + kept.size > self.max_bytes
            ):
                self._drop_oldest()
            self._kept[name] = (self._clock(), kept)
            self._bytes += kept.size
        return name

    def get(self, name: str) -> Kept | None:
        with self._lock:
            self._expire()
            found = self._kept.get(name)
        return None if found is None else found[1]

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def bytes(self) -> int:
        return self._bytes

    def _drop_oldest(self) -> None:
        _, (_, kept) = self._kept.popitem(last=False)
        self._bytes -= kept.size

    def _expire(self) -> None:
        limit = self._clock() - self.keep_seconds
        while self._kept and next(iter(self._kept.values()))[0] < limit:
            self._drop_oldest()


def _inventory(path: Path) -> tuple[Counter[str], str | None]:
    """The GPU models one capture names, and its driver version."""
    from gpuadvisor.evidence import load_evidence

    snapshot = load_evidence([path])
    return Counter(g.name for g in snapshot.gpus if g.name), snapshot.driver_version


def _described(name: str, models: Counter[str], driver: str | None) -> str:
    cards = ", ".join(f"{n} × {m}" for m, n in sorted(models.items()))
    return f"{name} shows {cards}" + (f" (driver {driver})" if driver else "")


def mixed_warning(
    paths: Sequence[Path], names: Sequence[str], conflicts: Sequence[EvidenceConflict]
) -> str:
    """Why these captures may come from different machines or cards, in words: they
    name different GPU models or counts, different drivers, or disagree on a value of
    the same card. Empty when nothing says so. Each file is read as the report reads it
    (an unreadable one has been refused before this is asked)."""
    seen = [(name, *_inventory(path)) for path, name in zip(paths, names, strict=True)]
    listing = [(name, models, driver) for name, models, driver in seen if models]
    reasons = []
    if len({tuple(sorted(m.items())) for _, m, _ in listing}) > 1:
        reasons.append("; ".join(_described(*entry) for entry in listing))
    drivers = {d for _, _, d in seen if d}
    if len(drivers) > 1 and not reasons:
        reasons.append(
            "they were taken under different drivers (" + ", ".join(sorted(drivers)) + ")"
        )
    for conflict in conflicts:
        where = f"the card at {conflict.gpu}" if conflict.gpu else "the machine"
        said = ", ".join(f"{v.file}: {v.value}" for v in conflict.values)
        field = conflict.field.rpartition(".")[2].replace("_", " ")
        reasons.append(f"they disagree on the {field} of {where} ({said})")
    if not reasons:
        return ""
    return (
        "These captures may come from different machines or cards: "
        + "; ".join(reasons)
        + ". A report on them would treat them as one machine."
    )
