"""Per-user caches of work that only depends on the installed files, like ``.pyc``.

Two things are cached, both under ``$XDG_CACHE_HOME/gpuadvisor`` (``~/.cache``):
compiled report templates (:mod:`gpuadvisor.render.env`) and the parsed bundled
documents, here: parsing the hundred-odd TOML files of the bundled rules and catalog is
the largest share of one ``advise`` run's own work, and it gives the same result until
a file changes.

Rules for both: ``GPUADVISOR_NO_CACHE=1`` turns them off; only a real folder owned by
the current user that nobody else can write to is used (cached content is trusted);
a cache that cannot be read or written (full disk, read-only home, no home at all, a
corrupt file) means working without it, never an error. Parsed documents are only
*parsed*: every load still validates them, so a cache entry can never let an invalid
rule or SKU through. An entry is used only while its file has the same size,
modification time and inode, and a file changed in the last few seconds is not cached
at all (its timestamp may not yet tell a later edit apart).

The documents' cache file, ``documents.json``, holds data, not code: one JSON array,
read with :mod:`json` only (a planted pickle, or any file that is not this JSON, is
damage: ignored and replaced). Its first element indexes the entries: a stamp and
where the entry's own JSON text lies in the file. Each entry is decoded only when its
document is asked for, anew each time, so every caller gets a fresh copy. An entry
holds the path, the parsed data, the file's text and where in the data TOML's dates and
times lie (JSON has none: they are written as ISO 8601 strings and turned back on
decoding), so a cached document comes back equal to a parse, of the same types.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuadvisor import __version__
from gpuadvisor.resources import data_dir

#: Files modified more recently than this are parsed but not cached.
SETTLE_SECONDS = 2.0
_FORMAT = 2

Document = tuple[dict[str, Any], str]


#: Largest cache file read (the bundled documents take well under 1 MiB).
MAX_CACHE_BYTES = 64 * 1024 * 1024


def _private(status: os.stat_result, kind: int) -> bool:
    """Of this kind (folder or file), owned by the current user, writable by no other."""
    getuid = getattr(os, "getuid", None)
    return (
        getuid is not None  # no owners to check (Windows): no cache
        and stat.S_IFMT(status.st_mode) == kind
        and status.st_uid == getuid()
        and not status.st_mode & 0o022
    )


def user_cache_folder(name: str) -> Path | None:
    """``$XDG_CACHE_HOME/gpuadvisor/NAME``, created private, or None if unusable."""
    if os.environ.get("GPUADVISOR_NO_CACHE") == "1":
        return None
    # The XDG spec says a relative XDG_CACHE_HOME is invalid and to be ignored; a
    # relative or empty home would put the cache under the current folder: no cache.
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        try:
            home = str(Path.home())
        except (RuntimeError, KeyError):  # no home folder: run without a cache
            return None
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    folder = Path(base) / "gpuadvisor" / name
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        status = folder.lstat()
    except OSError:
        return None
    # Cached content is trusted: use only a real folder of ours that nobody else can
    # write to (Jinja2's own default cache folder makes the same check).
    if not _private(status, stat.S_IFDIR) or not os.access(folder, os.W_OK):
        return None
    return folder


Stamp = tuple[int, int, int, int, int, int]


def _stamp(status: os.stat_result) -> Stamp:
    """What tells a file apart from its earlier versions: an edit that keeps size and
    modification time (``cp -p``, ``rsync --inplace``) still changes the ctime."""
    return (
        status.st_size,
        status.st_mtime_ns,
        status.st_ctime_ns,
        status.st_ino,
        status.st_dev,
        stat.S_IFMT(status.st_mode),
    )


def _read_private_file(file: Path) -> bytes | None:
    """The file's bytes if it is a regular file of ours that nobody else can write to,
    not too large; None otherwise. Never blocks (a named pipe), never follows a link,
    and checks the file it opened, not the name (no swap between check and read)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(file, flags)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not _private(status, stat.S_IFREG) or status.st_size > MAX_CACHE_BYTES:
            return None
        return handle.read(MAX_CACHE_BYTES + 1)


#: TOML's values that JSON lacks, by the name an entry's list of them uses: written as
#: ISO 8601 strings, read back by these.
_READERS: dict[str, Callable[[str], object]] = {
    "datetime": datetime.datetime.fromisoformat,
    "date": datetime.date.fromisoformat,
    "time": datetime.time.fromisoformat,
}

#: Where a value lies in a document: its keys and list indexes from the top.
_Place = list[str | int]

#: Between the elements of a cache file: one a line.
_SEPARATOR = ",\n"


class _Uncachable(ValueError):
    """A document that this JSON cannot hold exactly (a type no parser gives)."""


def _to_json(value: object, place: _Place, dates: list[_Place]) -> object:
    """``value`` as JSON can hold it, each date and time an ISO 8601 string whose kind
    and place are added to ``dates``; :class:`_Uncachable` for anything else."""
    # Exact types: a bool is an int too, a datetime a date, a subclass may hold more.
    if type(value) is dict:
        out: dict[str, object] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _Uncachable(type(key).__name__)
            out[key] = _to_json(item, [*place, key], dates)
        return out
    if type(value) is list:
        return [_to_json(item, [*place, index], dates) for index, item in enumerate(value)]
    if value is None or type(value) in (str, int, float, bool):
        return value
    if type(value) is datetime.datetime:
        if value.tzinfo is not None and type(value.tzinfo) is not datetime.timezone:
            raise _Uncachable("datetime")  # a zone that a fixed offset cannot stand for
        kind = "datetime"
    elif type(value) is datetime.date:
        kind = "date"
    elif type(value) is datetime.time and value.tzinfo is None:  # TOML times have none
        kind = "time"
    else:
        raise _Uncachable(type(value).__name__)
    dates.append([kind, *place])
    return value.isoformat()


def _encode(key: str, document: Document) -> str:
    """One entry's JSON text (ASCII, one line) for :func:`_decode`."""
    data, text = document
    dates: list[_Place] = []
    encoded = _to_json(data, [], dates)
    return json.dumps([key, encoded, text, dates], separators=(",", ":"))


def _decode(key: str, payload: str) -> Document | None:
    """The document of the entry :func:`_encode` wrote for ``key``, a new copy each
    time; None if it is not one (an error if it is damaged past that)."""
    entry = json.loads(payload)
    if not (isinstance(entry, list) and len(entry) == 4 and entry[0] == key):
        return None
    _, data, text, dates = entry
    if not (isinstance(data, dict) and isinstance(text, str) and isinstance(dates, list)):
        return None
    for kind, *place, last in dates:
        container = data
        for step in place:
            container = container[step]
        if type(container[last]) is not str:
            return None
        container[last] = _READERS[kind](container[last])
    return data, text


def _valid_entries(index: object, documents: str, start: int) -> dict[str, tuple[Stamp, str]]:
    """The well-formed entries of a cache file's index (anything else is dropped), each
    with its JSON text: ``documents[start + offset:][:length]``."""
    if not isinstance(index, dict) or index.get("format") != _FORMAT:
        return {}
    entries = index.get("entries")
    if not isinstance(entries, dict):
        return {}
    valid: dict[str, tuple[Stamp, str]] = {}
    for key, entry in entries.items():
        if (
            isinstance(entry, list)
            and len(entry) == 3
            and isinstance(entry[0], list)
            and len(entry[0]) == 6
            and all(type(part) is int for part in [*entry[0], entry[1], entry[2]])
            and entry[1] >= 0
            and entry[2] > 0
        ):
            stamp, offset, length = entry
            begin = start + offset
            valid[key] = (
                (stamp[0], stamp[1], stamp[2], stamp[3], stamp[4], stamp[5]),
                documents[begin : begin + length],
            )
    return valid


def _read_entries(data: bytes) -> dict[str, tuple[Stamp, str]]:
    """The entries of a cache file's bytes; an error if they are not such a file."""
    text = data.decode("ascii")
    if not text.startswith("["):
        return {}
    index, end = json.JSONDecoder().raw_decode(text, 1)
    return _valid_entries(index, text, end + len(_SEPARATOR))


def _cache_file_text(entries: dict[str, tuple[Stamp, str]]) -> str:
    """A JSON array: the index, then each entry's JSON text, one a line."""
    index: dict[str, list[object]] = {}
    offset = 0
    for key, (stamp, payload) in entries.items():
        index[key] = [list(stamp), offset, len(payload)]
        offset += len(payload) + len(_SEPARATOR)
    head = json.dumps({"format": _FORMAT, "entries": index}, separators=(",", ":"))
    return "[" + _SEPARATOR.join([head, *(payload for _, payload in entries.values())]) + "]\n"


class DocumentCache:
    """Parsed documents by path, read from and written to one JSON file in the cache
    folder.

    Each entry holds its document encoded on its own and is decoded only when asked
    for, so every caller gets a fresh copy it may change freely.
    """

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self._entries: dict[str, tuple[Stamp, str]] | None = None
        self._dirty = False

    def _load(self) -> dict[str, tuple[Stamp, str]]:
        if self._entries is None:
            self._entries = {}
            data = _read_private_file(self.file) if self.file is not None else None
            if data is not None:
                with contextlib.suppress(Exception):  # any damage: start afresh
                    self._entries = _read_entries(data)
        return self._entries

    def get(self, path: Path, parse: Callable[[Path], Document]) -> Document:
        """The parsed document at ``path``: from the cache while the file is unchanged,
        else from ``parse`` (whose errors pass through untouched)."""
        try:
            status = os.stat(path)
        except OSError:
            return parse(path)  # let the reader report what is wrong
        if not stat.S_ISREG(status.st_mode):
            return parse(path)
        entries = self._load()
        key = str(path)
        found = entries.get(key)
        if found is not None and found[0] == _stamp(status):
            with contextlib.suppress(Exception):
                cached = _decode(key, found[1])
                if cached is not None:
                    return cached
        document = parse(path)
        if time.time() - status.st_mtime >= SETTLE_SECONDS:
            with contextlib.suppress(Exception):  # _Uncachable: parsed every time
                entries[key] = (_stamp(status), _encode(key, document))
                self._dirty = True
        return document

    def read(self, path: Path) -> Document:
        """:func:`gpuadvisor.inputs.textio.load_document`, through the cache."""
        from gpuadvisor.inputs.textio import load_document

        return self.get(path, load_document)

    def flush(self) -> None:
        """Write new entries, atomically; a failure only means no cache next time."""
        if not self._dirty or self.file is None or self._entries is None:
            return
        self._dirty = False
        import tempfile

        temporary = None
        try:
            handle, temporary = tempfile.mkstemp(prefix=".documents-", dir=self.file.parent)
            with os.fdopen(handle, "w", encoding="ascii", newline="\n") as out:
                out.write(_cache_file_text(self._entries))
            os.replace(temporary, self.file)
            temporary = None
        except (OSError, ValueError):
            pass
        finally:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)


_DOCUMENTS: DocumentCache | None = None


def bundled_documents() -> DocumentCache:
    """The process's cache of parsed bundled documents (a no-op one when caching is
    off or impossible)."""
    global _DOCUMENTS
    folder = user_cache_folder(f"documents-{__version__}")
    # One file per installation: installs of one version (virtualenvs, checkouts) each
    # keep their own entries instead of piling them all into one ever-growing file.
    install = hashlib.sha256(str(data_dir("rules").parent).encode()).hexdigest()[:16]
    file = folder / f"documents-{install}.json" if folder is not None else None
    if _DOCUMENTS is None or _DOCUMENTS.file != file:
        _DOCUMENTS = DocumentCache(file)
    return _DOCUMENTS
