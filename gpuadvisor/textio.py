"""Reading user files safely and writing outputs atomically.

Everything that comes from disk passes through here so that size limits, encodings and
syntax errors are reported the same way everywhere: file name, line, exit code 2.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from gpuadvisor.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: Largest input file accepted (profiles, captures, overlays). Real captures of a
#: 16-GPU host with full ``-q`` output stay well under 4 MiB; anything bigger is refused
#: rather than parsed, so a pasted log cannot exhaust memory.
MAX_INPUT_BYTES = 16 * 1024 * 1024


def read_bytes(path: Path, *, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The file's bytes, or an InputError that names the file and what is wrong."""
    name = str(path)
    try:
        if path.is_dir():
            raise InputError("is a directory, expected a file", file=name)
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise InputError("file not found", file=name) from None
    except PermissionError:
        raise InputError("permission denied", file=name) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", file=name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=name) from None
    if len(data) > max_bytes:
        raise InputError(
            f"file is larger than the {max_bytes // (1024 * 1024)} MiB limit for inputs",
            file=name,
        )
    return data


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text (a BOM is tolerated); binary or other encodings are refused."""
    if b"\x00" in data[:8192]:
        raise InputError("looks like binary data, expected text", file=name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 text (byte {exc.start})", file=name, line=line) from None
    return text


def read_text(path: Path, *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    return decode_text(read_bytes(path, max_bytes=max_bytes), str(path))


_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


def parse_toml(text: str, name: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _TOML_POS.search(message)
        line = int(match.group(1)) if match else None
        message = _TOML_POS.sub("", message).strip()
        raise InputError(f"invalid TOML: {message}", file=name, line=line) from None


def parse_json(text: str, name: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=name, line=exc.lineno) from None
    except ValueError as exc:
        raise InputError(f"invalid JSON: {exc}", file=name) from None


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a number gpuadvisor accepts")


def parse_document(text: str, name: str) -> dict[str, Any]:
    """A TOML or JSON document (JSON when the first character is ``{``)."""
    stripped = text.lstrip()
    data = parse_json(text, name) if stripped.startswith("{") else parse_toml(text, name)
    if not isinstance(data, dict):
        raise InputError("expected a table / object at the top level", file=name)
    return data


def load_document(path: Path) -> tuple[dict[str, Any], str]:
    """Parsed TOML or JSON and its text (kept for locating fields by line)."""
    text = read_text(path)
    if not text.strip():
        raise InputError("file is empty", file=str(path))
    return parse_document(text, str(path)), text


def locate_field(text: str, path: tuple[str | int, ...]) -> int | None:
    """Best-effort 1-based line of a dotted field in TOML or JSON text.

    tomllib and json keep no positions, so we look for the table header and then the
    key inside it. A wrong guess would mislead, so an ambiguous key yields None.
    """
    keys = [str(p) for p in path if isinstance(p, str)]
    if not keys:
        return None
    lines = text.splitlines()
    start = 0
    if len(keys) > 1:
        header = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(map(re.escape, keys[:-1])) + r"\s*\]")
        for number, line in enumerate(lines):
            if header.match(line):
                start = number + 1
                break
    key = re.escape(keys[-1])
    pattern = re.compile(rf'^\s*(?:"{key}"|{key})\s*[=:]|^\s*"{key}"\s*:')
    dotted = re.compile(r"^\s*" + r"\s*\.\s*".join(map(re.escape, keys)) + r"\s*=")
    for number in range(start, len(lines)):
        line = lines[number]
        if number > start and start and re.match(r"^\s*\[", line):
            break
        if pattern.search(line):
            return number + 1
    for number, line in enumerate(lines):
        if dotted.match(line):
            return number + 1
    return None


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the whole new one.

    The bytes go to a temporary file in the same folder, are flushed to disk, then
    renamed over the target; on any failure the temporary file is removed and an
    existing target is left untouched.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    name = str(path)
    folder = path.parent if str(path.parent) else Path()
    if path.is_dir():
        raise InputError("output path is a directory", file=name)
    if not folder.is_dir():
        raise InputError(f"output folder does not exist: {folder}", file=name)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write here: {exc.strerror or exc}", file=name) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(payload)
            stream.flush()
            os.fsync(stream.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(temporary, path.stat().st_mode & 0o7777)
        else:
            os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise InputError(f"cannot write output: {exc.strerror or exc}", file=name) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
