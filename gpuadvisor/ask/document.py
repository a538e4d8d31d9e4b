"""The commented TOML profile ``gpuadvisor ask`` writes."""

from __future__ import annotations

from typing import Final

from gpuadvisor.errors import InternalError
from gpuadvisor.inputs.profile import Profile

ASK_HEADER: Final = [
    "# gpuadvisor workload profile, written by `gpuadvisor ask`. Each comment says what",
    "# the field means; edit freely, then `gpuadvisor advise THIS_FILE` gives the answer.",
    "# A commented-out line is an optional field left unset.",
]


def profile_document(profile: Profile) -> str:
    """The commented TOML for ``profile``, checked to load back to the same profile."""
    from gpuadvisor.inputs.examples import profile_text
    from gpuadvisor.inputs.profile import parse_profile

    text = profile_text(profile, header=ASK_HEADER)
    if parse_profile(text, "<ask output>") != profile:
        raise InternalError("the written profile would not load back unchanged")
    return text
