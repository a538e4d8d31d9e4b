"""State the page carries between requests, signed so the server takes back only what
it handed out.

The server keeps no one's answers: they travel in the page the person is looking at
(its address, and a hidden field of its forms), a message for the next page travels in
that page's address, and the finished decision travels in the report page, for its
downloads. Each token is compact JSON, compressed, and signed with HMAC-SHA256 under a
key made when the process starts; a token is signed for one purpose ("walk", "note",
"decision"), so one cannot stand in for another. A token from an earlier run of the
server, or one that was changed, is refused as out of date. (The one thing the server
keeps between requests is an upload's captures, bounded: :mod:`.captures`.)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import zlib
from typing import Any, Final

from gpuadvisor.ask import check_value
from gpuadvisor.decision.model import Decision
from gpuadvisor.web.walk import Walk

#: Where a changed answer may return.
RETURNS: Final = ("", "answers", "report")

#: Largest token accepted back (a decision with the series of many GPUs stays far
#: below; a larger one was not made here).
MAX_TOKEN_CHARS: Final = 8 * 1024 * 1024
_MAX_JSON_BYTES: Final = 64 * 1024 * 1024


class StaleToken(Exception):
    """The token was not made by this server process (or was changed since)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    """Packs values into signed tokens and unpacks only tokens it signed."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)

    def _mac(self, purpose: str, body: str) -> str:
        message = purpose.encode("ascii") + b"\0" + body.encode("ascii")
        return _b64(hmac.new(self._key, message, hashlib.sha256).digest())

    def pack(self, purpose: str, value: Any) -> str:
        raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        body = _b64(zlib.compress(raw.encode("utf-8"), 6))
        return f"{body}.{self._mac(purpose, body)}"

    def unpack(self, purpose: str, token: str) -> Any:
        if not token or len(token) > MAX_TOKEN_CHARS or not token.isascii():
            raise StaleToken(purpose)
        body, _, mac = token.partition(".")
        if not hmac.compare_digest(mac, self._mac(purpose, body)):
            raise StaleToken(purpose)
        try:
            inflate = zlib.decompressobj()
            raw = inflate.decompress(_unb64(body), _MAX_JSON_BYTES)
            return json.loads(raw.decode("utf-8"))
        except (binascii.Error, zlib.error, ValueError) as exc:  # signed, so a bug
            raise StaleToken(purpose) from exc

    # -- the things tokens carry ------------------------------------------------------

    def pack_walk(self, walk: Walk) -> str:
        return self.pack(
            "walk",
            {
                "stated": dict(walk.stated),
                "at": walk.at,
                "asked": list(walk.asked),
                "given": sorted(walk.given),
                "review": walk.review,
                "start": walk.start_name,
                "notes": list(walk.notes),
                "unknown": sorted(walk.unknown),
                "typed": dict(walk.typed),
                "said": walk.said,
                "returning": walk.returning,
                "captures": walk.captures,
                "capture_names": list(walk.capture_names),
            },
        )

    def unpack_walk(self, token: str) -> Walk:
        data = self.unpack("walk", token)
        try:
            # Checked again as a profile file's values are (lists back to tuples, and
            # a value this version would refuse is not carried into the profile).
            stated = {
                path: check_value(path, raw, strict=True) for path, raw in data["stated"].items()
            }
            returning = data["returning"]
            if returning not in RETURNS:
                raise ValueError(returning)
            return Walk(
                stated=stated,
                at=data["at"],
                asked=tuple(data["asked"]),
                given=frozenset(data["given"]),
                review=bool(data["review"]),
                start_name=str(data["start"]),
                notes=tuple(str(n) for n in data["notes"]),
                unknown=frozenset(str(p) for p in data["unknown"]),
                typed={str(k): str(v) for k, v in data["typed"].items()},
                said=str(data["said"]),
                returning=returning,
                captures=str(data["captures"]),
                capture_names=tuple(str(n) for n in data["capture_names"]),
            )
        except (KeyError, TypeError, ValueError, LookupError, AttributeError) as exc:
            raise StaleToken("walk") from exc

    def pack_note(self, message: str, typed: str = "") -> str:
        """A message for the next page, and the answer typed before it (a refused answer
        is shown again after the redirect, and nobody can make the page say anything
        else)."""
        return self.pack("note", [message, typed])

    def unpack_note(self, token: str) -> tuple[str, str]:
        data = self.unpack("note", token)
        if not (
            isinstance(data, list) and len(data) == 2 and all(isinstance(x, str) for x in data)
        ):
            raise StaleToken("note")
        return data[0], data[1]

    def pack_decision(self, decision: Decision) -> str:
        return self.pack("decision", decision.model_dump(mode="json", by_alias=True))

    def unpack_decision(self, token: str) -> Decision:
        data = self.unpack("decision", token)
        try:
            return Decision.model_validate(data)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise StaleToken("decision") from exc
