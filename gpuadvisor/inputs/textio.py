"""Reading user files safely and writing outputs atomically.

Everything that comes from disk passes through here so that size limits, encodings and
syntax errors are reported the same way everywhere: file name, line, exit code 2.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

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
        with _open(path, os.O_RDONLY, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise InputError("file not found", file=name) from None
    except NotADirectoryError:
        raise InputError("file not found (a part of the path is a file)", file=name) from None
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


def _open(path: Path, flags: int, mode: str) -> IO[bytes]:
    """``path.open(mode)``, except that a named pipe is opened without waiting.

    Opening a FIFO blocks until the other end opens it: a capture bundle holding a FIFO
    named like a log file would hang the tool. Opened non-blocking, reading a pipe no
    one writes to ends at once (an empty file), writing one no one reads fails at once;
    a pipe that is in use (``/dev/stdin`` from a shell) then reads or writes as usual.
    """
    if hasattr(os, "O_NONBLOCK") and _is_fifo(path):
        descriptor = os.open(path, flags | os.O_NONBLOCK)
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, mode)
    return path.open(mode)


def _is_fifo(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(path.stat().st_mode)
    except OSError:
        return False


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


#: Byte-order marks of the Unicode encodings other than UTF-8 a capture arrives in,
#: longest first (the UTF-32 LE mark begins with the UTF-16 LE one). Windows PowerShell
#: 5.1 writes ``nvidia-smi -q > q.txt`` as UTF-16 LE with a BOM; ``Out-File -Encoding``
#: can give the others.
_CAPTURE_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_CAPTURE_HINT = (
    "save the capture as text (UTF-8, or UTF-16 with its byte-order mark); from PowerShell: "
    "nvidia-smi -q | Out-File -Encoding utf8 q.txt"
)


def decode_capture(data: bytes, name: str) -> str:
    """A captured tool output's text: UTF-8 as :func:`decode_text` reads it, or UTF-16 /
    UTF-32 when the file starts with that encoding's byte-order mark (what PowerShell's
    ``>`` writes). Without a mark, NUL bytes mean binary data, refused with a hint.

    Only captures get this: TOML and JSON documents are UTF-8 by their specifications.
    """
    for bom, encoding in _CAPTURE_BOMS:
        if data.startswith(bom):
            body = data[len(bom) :]
            try:
                text = body.decode(encoding)
            except UnicodeDecodeError as exc:
                # The byte offset in the file, and its line in the text decoded so far.
                line = body[: exc.start].decode(encoding, "replace").count("\n") + 1
                raise InputError(
                    f"not valid {encoding.upper()} text (byte {len(bom) + exc.start})",
                    file=name,
                    line=line,
                ) from None
            if "\x00" in text[:8192]:
                raise InputError(
                    f"looks like binary data after a {encoding.upper()} byte-order mark",
                    file=name,
                    hint=_CAPTURE_HINT,
                )
            return text
    if b"\x00" in data[:8192]:
        raise InputError("looks like binary data, expected text", file=name, hint=_CAPTURE_HINT)
    return decode_text(data, name)


def read_text(path: Path, *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    return decode_text(read_bytes(path, max_bytes=max_bytes), str(path))


_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")
_TOML_END = "(at end of document)"
#: Python refuses to turn longer digit strings into an int (CVE-2020-10735); a number
#: that long is never a real value, so it is reported as such, with its line.
_INT_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 4300)() or 4300
_LONG_NUMBER = re.compile(rf"\d{{{_INT_DIGITS},}}")
#: Nesting deeper than this is refused before Python's recursion limit is reached (the
#: TOML and JSON parsers recurse; no gpuadvisor document nests more than five levels).
MAX_NESTING = 64


def _long_number_line(text: str) -> int | None:
    match = _LONG_NUMBER.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _too_deep(name: str) -> InputError:
    return InputError(
        f"nested more than {MAX_NESTING} levels deep; no gpuadvisor document is", file=name
    )


def parse_toml(text: str, name: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _TOML_POS.search(message)
        line = int(match.group(1)) if match else None
        if line is None and _TOML_END in message:
            line = len(text.splitlines()) or 1
        message = _TOML_POS.sub("", message).replace(_TOML_END, "").strip()
        raise InputError(f"invalid TOML: {message}", file=name, line=line) from None
    except RecursionError:
        raise _too_deep(name) from None
    except ValueError:
        # tomllib lets int()'s digit limit through as a plain ValueError.
        raise InputError(
            "invalid TOML: a number has too many digits",
            file=name,
            line=_long_number_line(text),
        ) from None
    _check_tree(data, name)
    return data


def parse_json(text: str, name: str) -> Any:
    try:
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=name, line=exc.lineno) from None
    except RecursionError:
        raise _too_deep(name) from None
    except _DuplicateKey as exc:
        raise InputError(
            f"invalid JSON: key {exc.key!r} appears twice in one object; a reader would see "
            "one value and gpuadvisor use the other",
            file=name,
            line=_second_key_line(text, exc.key),
            field=exc.key,
        ) from None
    except ValueError as exc:
        if _long_number_line(text) is not None:
            raise InputError(
                "invalid JSON: a number has too many digits",
                file=name,
                line=_long_number_line(text),
            ) from None
        raise InputError(f"invalid JSON: {exc}", file=name) from None
    _check_tree(data, name)
    return data


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a number gpuadvisor accepts")


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _second_key_line(text: str, key: str) -> int | None:
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    found = [m.start() for m in pattern.finditer(text)]
    return text.count("\n", 0, found[1]) + 1 if len(found) > 1 else None


def _check_tree(data: Any, name: str) -> None:
    """Refuse nesting deeper than MAX_NESTING and text that cannot be written back.

    JSON escapes can spell lone surrogates (``"\\ud800"``), which no UTF-8 output can
    hold: a report or snapshot echoing one would fail only when it is written.
    Walked with an explicit stack, so the check itself cannot hit the recursion limit.
    """
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            _check_string(node, name)
        elif isinstance(node, (dict, list)):
            if depth >= MAX_NESTING:
                raise _too_deep(name)
            if isinstance(node, dict):
                for key, value in node.items():
                    _check_string(key, name)
                    stack.append((value, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in node)


def _check_string(value: str, name: str) -> None:
    if value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            "text holds an unpaired UTF-16 surrogate (a \\ud800-\\udfff escape), which is "
            "not a character",
            file=name,
        ) from None


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
    # The field is itself a table: ``[platfrom]`` or ``[meta.title]``.
    table = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(map(re.escape, keys)) + r"\s*\]")
    for number, line in enumerate(lines):
        if table.match(line):
            return number + 1
    return None


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the whole new one.

    The bytes go to a temporary file in the same folder, are flushed to disk, then
    renamed over the target; on any failure the temporary file is removed and an
    existing target is left untouched. A symbolic link to a file is followed (the file
    is replaced, the link stays a link). A target that is not a regular file
    (``/dev/stdout``, ``/dev/null``, a named pipe) cannot be replaced and is written to
    directly: renaming over it would replace the device node, not write to it.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    name = str(path)
    target = check_output_path(path)
    if target is None:
        _write_through(path, payload, name)
        return
    folder = target.parent
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write here: {exc.strerror or exc}", file=name) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(payload)
            stream.flush()
            os.fsync(stream.fileno())
        if target.exists():
            with contextlib.suppress(OSError):
                os.chmod(temporary, target.stat().st_mode & 0o7777)
        else:
            os.chmod(temporary, _new_file_mode())
        os.replace(temporary, target)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise InputError(f"cannot write output: {exc.strerror or exc}", file=name) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def check_output_path(path: Path) -> Path | None:
    """Where :func:`atomic_write` will put ``path``, refused early when it cannot be
    written (so ``ask`` does not find out after the last question).

    None for a target that is written through (not a regular file); otherwise the
    regular file to replace, with symbolic links followed.
    """
    name = str(path)
    if path.is_dir():
        raise InputError("output path is a directory", file=name)
    if path.exists() and not path.is_file():
        return None
    target = path.resolve() if path.is_symlink() else path
    folder = target.parent
    if not folder.exists():
        raise InputError(f"output folder does not exist: {folder}", file=name)
    if not folder.is_dir():
        raise InputError(f"output folder is not a folder: {folder}", file=name)
    return target


def _new_file_mode() -> int:
    """0666 less the umask, as ``open()`` would create the file (mkstemp makes 0600)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _write_through(path: Path, payload: bytes, name: str) -> None:
    try:
        with _open(path, os.O_WRONLY, "wb") as stream:
            stream.write(payload)
    except OSError as exc:
        raise InputError(f"cannot write output: {exc.strerror or exc}", file=name) from None
