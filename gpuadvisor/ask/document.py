"""The commented TOML profile ``gpuadvisor ask`` writes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from gpuadvisor.errors import InternalError
from gpuadvisor.inputs.profile import Profile

ASK_HEADER: Final = [
    "# gpuadvisor workload profile, written by `gpuadvisor ask`. Each comment says what",
    "# the field means; edit freely, then `gpuadvisor advise THIS_FILE` gives the answer.",
    "# A commented-out line is an optional field left unset.",
]

#: What a field answered "unknown" (or left unknown with one) says in the profile.
UNKNOWN_NOTE: Final = "(not known yet: the default shown applies until stated)"


def profile_document(profile: Profile, unknown: Iterable[str] = ()) -> str:
    """The commented TOML for ``profile``, checked to load back to the same profile.

    Each field in ``unknown`` ("section.name": not known when the profile was written)
    is a commented-out line: the file does not state it, so ``advise`` applies the
    default and says so, and nobody reads the default as an answer that was given.
    """
    from gpuadvisor.inputs.examples import profile_text
    from gpuadvisor.inputs.profile import parse_profile

    unknown = set(unknown)
    text = _comment_out(profile_text(profile, header=ASK_HEADER), unknown)
    loaded = parse_profile(text, "<ask output>")
    if loaded != profile:
        raise InternalError("the written profile would not load back unchanged")
    for path in unknown:
        section, _, name = path.partition(".")
        if name in getattr(loaded, section).model_fields_set:
            raise InternalError(f"the written profile states {path}, which is not known")
    return text


def _comment_out(text: str, unknown: set[str]) -> str:
    """``text`` with the line of each field in ``unknown`` turned into a comment."""
    if not unknown:
        return text
    lines = text.splitlines()
    section = ""
    for number, line in enumerate(lines):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        name, equals, rest = line.partition(" = ")
        if equals and f"{section}.{name}" in unknown:
            value, _, comment = rest.partition("  # ")
            lines[number] = f"# {name} = {value}  # {UNKNOWN_NOTE} {comment}".rstrip()
    return "\n".join(lines) + "\n"
