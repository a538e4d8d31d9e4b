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
"""

from __future__ import annotations

import contextlib
import os
import pickle
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuadvisor import __version__

#: Files modified more recently than this are parsed but not cached.
SETTLE_SECONDS = 2.0
_FORMAT = 1

Document = tuple[dict[str, Any], str]


#: Largest cache file read (the bundled documents pickle to well under 1 MiB).
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


def _valid_entries(stored: object) -> dict[str, tuple[Stamp, bytes]]:
    """The well-formed entries of an unpickled cache file (anything else is dropped)."""
    if not isinstance(stored, dict) or stored.get("format") != _FORMAT:
        return {}
    entries = stored.get("entries")
    if not isinstance(entries, dict):
        return {}
    valid: dict[str, tuple[Stamp, bytes]] = {}
    for key, entry in entries.items():
        if (
            isinstance(key, str)
            and isinstance(entry, tuple)
            and len(entry) == 2
            and isinstance(entry[1], bytes)
            and isinstance(entry[0], tuple)
            and len(entry[0]) == 6
            and all(type(part) is int for part in entry[0])
        ):
            valid[key] = entry
    return valid


class DocumentCache:
    """Parsed documents by path, read from and written to one file in the cache folder.

    Each entry holds its document pickled on its own, so every caller gets a fresh copy
    it may change freely.
    """

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self._entries: dict[str, tuple[Stamp, bytes]] | None = None
        self._dirty = False

    def _load(self) -> dict[str, tuple[Stamp, bytes]]:
        if self._entries is None:
            self._entries = {}
            data = _read_private_file(self.file) if self.file is not None else None
            if data is not None:
                with contextlib.suppress(Exception):  # any damage: start afresh
                    self._entries = _valid_entries(pickle.loads(data))
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
                document = pickle.loads(found[1])
                if isinstance(document, tuple) and len(document) == 2:
                    data, text = document
                    if isinstance(data, dict) and isinstance(text, str):
                        return data, text
        document = parse(path)
        if time.time() - status.st_mtime >= SETTLE_SECONDS:
            with contextlib.suppress(Exception):
                entries[key] = (_stamp(status), pickle.dumps(document, pickle.HIGHEST_PROTOCOL))
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
        payload = {"format": _FORMAT, "entries": self._entries}
        import tempfile

        temporary = None
        try:
            handle, temporary = tempfile.mkstemp(prefix=".documents-", dir=self.file.parent)
            with os.fdopen(handle, "wb") as out:
                pickle.dump(payload, out, pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, self.file)
            temporary = None
        except OSError:
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
    file = folder / "documents.pickle" if folder is not None else None
    if _DOCUMENTS is None or _DOCUMENTS.file != file:
        _DOCUMENTS = DocumentCache(file)
    return _DOCUMENTS
