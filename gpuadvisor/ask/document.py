"""The commented TOML profile ``gpuadvisor ask`` writes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from gpuadvisor.ask.questions import QUESTIONS
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

    notes = dict.fromkeys(unknown, UNKNOWN_NOTE) | _replaced(profile)
    text = _comment_out(profile_text(profile, header=ASK_HEADER), notes)
    loaded = parse_profile(text, "<ask output>")
    if loaded != profile:
        raise InternalError("the written profile would not load back unchanged")
    for path in notes:
        section, _, name = path.partition(".")
        if name in getattr(loaded, section).model_fields_set:
            raise InternalError(f"the written profile states {path}, which is not known")
    return text


def _replaced(profile: Profile) -> dict[str, str]:
    """The fields a stated value stands in for (the power left for the GPUs, where the
    supply's rating is given: :attr:`Question.replaces`), each with its note: a profile
    that states both is refused."""
    notes = {}
    for question in QUESTIONS:
        if question.replaces and _stated(profile, question.field):
            name = question.field.partition(".")[2]
            for path, _ in question.replaces:
                if not _stated(profile, path, value=False):
                    notes[path] = f"(not stated: {name} stands in for it)"
    return notes


def _stated(profile: Profile, path: str, *, value: bool = True) -> bool:
    """Whether the profile states ``section.name`` (and, with ``value``, not as 0)."""
    section, _, name = path.partition(".")
    table = getattr(profile, section)
    return name in table.model_fields_set and (not value or bool(getattr(table, name)))


def _comment_out(text: str, notes: dict[str, str]) -> str:
    """``text`` with the line of each field in ``notes`` turned into a comment that
    says why (its note)."""
    if not notes:
        return text
    lines = text.splitlines()
    section = ""
    for number, line in enumerate(lines):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        name, equals, rest = line.partition(" = ")
        if equals and f"{section}.{name}" in notes:
            value, _, comment = rest.partition("  # ")
            note = notes[f"{section}.{name}"]
            lines[number] = f"# {name} = {value}  # {note} {comment}".rstrip()
    return "\n".join(lines) + "\n"
