"""Files a person uploads: data kept for one request in a private temporary folder.

Each upload is written under a name chosen here (``upload-01``, ...) inside a folder
made for the request (``tempfile``: mode 0700, removed when the request is done,
whatever happened), and read back through ``inputs.textio`` like any file the command
line reads: the same size limit, the same UTF-8 check, the same messages. The name the
browser sent is never used as a path: it is only the name the report and the messages
cite (its last part, printable characters only, shortened), so nothing a person sends
can point at a file of the server's.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, TypeGuard

from starlette.datastructures import UploadFile

from gpuadvisor.decision.model import Decision
from gpuadvisor.errors import GpuAdvisorError
from gpuadvisor.inputs.textio import MAX_INPUT_BYTES

#: Evidence files one report may take (a host's captures are a handful).
MAX_FILES: Final = 16
#: What one upload may hold before it is cut: one byte over the input limit, so
#: ``textio`` still sees, and names, a file that is too large.
MAX_KEPT_BYTES: Final = MAX_INPUT_BYTES + 1
_NAME_LENGTH: Final = 120
_UNPRINTABLE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]"
)


def shown_name(sent: str | None, number: int) -> str:
    """The name an upload is cited by: the last part of what the browser sent.

    ``C:\\captures\\q.txt`` and ``../../etc/passwd`` become ``q.txt`` and ``passwd``;
    control and direction characters are dropped; nothing left gives ``upload-NN``.
    """
    name = re.split(r"[\\/]", sent or "")[-1]
    name = _UNPRINTABLE.sub("", name).strip()
    if name in ("", ".", ".."):
        return f"upload-{number:02d}"
    return name[:_NAME_LENGTH]


class RequestFolder:
    """The private folder of one request and the uploads written into it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._shown: dict[str, str] = {}

    def keep(self, sent_name: str | None, data: bytes) -> Path:
        """Write one upload; the returned path is ours, cited as its shown name."""
        number = len(self._shown) + 1
        path = self.path / f"upload-{number:02d}"
        path.write_bytes(data[:MAX_KEPT_BYTES])
        shown = shown_name(sent_name, number)
        taken = set(self._shown.values())
        if shown in taken:
            stem = shown
            copy = 2
            while shown in taken:
                shown = f"{stem} ({copy})"
                copy += 1
        self._shown[str(path)] = shown
        return path

    def shown(self, path: Path) -> str:
        return self._shown.get(str(path), path.name)

    def cite(self, error: GpuAdvisorError) -> GpuAdvisorError:
        """The error as a person reads it: naming the upload, not our copy of it."""
        for ours, shown in self._shown.items():
            if error.file == ours:
                error.file = shown
            error.message = error.message.replace(ours, shown)
            if error.hint:
                error.hint = error.hint.replace(ours, shown)
        return error

    def cite_in(self, decision: Decision) -> Decision:
        """The decision citing each upload by its shown name wherever it names a file
        (inputs, measured values, findings' evidence)."""
        if not self._shown:
            return decision
        text = decision.model_dump_json(by_alias=True)
        for ours, shown in self._shown.items():
            text = text.replace(_json_inner(ours), _json_inner(shown))
        return Decision.model_validate_json(text)


def _json_inner(text: str) -> str:
    """``text`` as it appears inside a JSON string."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


@contextmanager
def request_folder() -> Iterator[RequestFolder]:
    """A folder for one request's uploads, removed on the way out in every case."""
    path = Path(tempfile.mkdtemp(prefix="gpuadvisor-web-"))
    try:
        yield RequestFolder(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


def is_upload(value: object) -> TypeGuard[UploadFile]:
    """Whether a form value is a file part that carries a file (a file input left
    empty still sends a part, with no name and no bytes)."""
    return isinstance(value, UploadFile) and bool(value.filename)


def read_upload(upload: UploadFile) -> bytes:
    """The upload's bytes, at most one past the input limit (see MAX_KEPT_BYTES)."""
    return upload.file.read(MAX_KEPT_BYTES)
