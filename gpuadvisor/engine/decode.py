"""Video decode streams against a card's NVDEC engines (``workload.decode_streams``).

Pure arithmetic over the policy's judgement (``rules/_policy.toml`` ``[decode]``): the
pixel rate one NVDEC engine sustains per codec. A stream of a resolution and frame rate
costs its megapixels times its frames per second; one engine decodes as many whole
streams as its rate holds; a card decodes ``nvdec`` times that. The cards one host
needs, ``ceil(streams / (engines per card x streams per engine))``, is a lower bound on
an option's card count per host (:mod:`gpuadvisor.engine.options`), and DEC-001 rejects
an option whose cards decode fewer. A card whose engines are unknown is never assumed
to have any (no bound: it cannot be counted on).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from pydantic import Field

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.policy_base import StrictSection as _Strict
from gpuadvisor.inputs.catalog import Sku
from gpuadvisor.inputs.profile import RESOLUTION_PATTERN

#: Codecs a profile may name, as the questionnaire and the report spell them.
CODEC_WORDS: dict[str, str] = {"h264": "H.264", "hevc": "H.265 (HEVC)", "av1": "AV1"}

#: Frame sizes by their usual names (width x height, in megapixels: arithmetic).
FRAME_MPX: dict[str, float] = {
    "720p": 1280 * 720 / 1e6,
    "1080p": 1920 * 1080 / 1e6,
    "1440p": 2560 * 1440 / 1e6,
    "2160p": 3840 * 2160 / 1e6,
    "4k": 3840 * 2160 / 1e6,
}

_RESOLUTION = re.compile(RESOLUTION_PATTERN)


class DecodeExample(_Strict):
    name: str
    codec: str
    resolution: str
    streams_per_engine: int = Field(ge=0)


class DecodePolicy(_Strict):
    why: str = Field(min_length=40)
    #: Megapixels x frames per second one NVDEC engine decodes, per codec.
    mpx_fps_per_engine: dict[str, float]
    sources: tuple[str, ...] = Field(min_length=1)
    examples: tuple[DecodeExample, ...] = ()


def frame(resolution: str) -> tuple[float, int]:
    """(megapixels, frames per second) of a resolution such as ``1080p30``."""
    found = _RESOLUTION.match(resolution)
    if found is None:
        raise ValueError(f"not a resolution with a frame rate: {resolution!r}")
    return FRAME_MPX[found.group(1)], int(found.group(2))


def streams_per_engine(policy: DecodePolicy, codec: str, resolution: str) -> int:
    """Whole streams of this codec and resolution one NVDEC engine decodes."""
    mpx, fps = frame(resolution)
    return math.floor(policy.mpx_fps_per_engine[codec] / (mpx * fps) + 1e-9)


def card_streams(sku: Sku, per_engine: int, codec: str) -> int | None:
    """Streams one card decodes; ``None`` when its engines (or AV1 decode) are not known,
    0 when it has none (or cannot decode AV1)."""
    if sku.nvdec is None:
        return None
    if codec == "av1":
        if sku.av1_decode is None:
            return None
        if not sku.av1_decode:
            return 0
    return sku.nvdec * per_engine


def cards_needed(sku: Sku, need: tuple[int, int, str] | None) -> int | None:
    """The cards one host needs to decode its streams (``need``: streams per host,
    streams per engine, codec); 0 without a need; ``None`` when this card cannot be
    counted on to decode them (its engines unknown, none, or no AV1)."""
    if need is None:
        return 0
    streams, per_engine, codec = need
    per_card = card_streams(sku, per_engine, codec)
    if not per_card:
        return None
    return math.ceil(streams / per_card)


def floor(sku: Sku, need: object) -> int:
    """The cards of ``sku`` one host needs for its video streams, as a lower bound on
    an option's cards (0: no need, or a card that cannot be counted on for them, which
    DEC-001 names)."""
    assert need is None or isinstance(need, tuple)
    return cards_needed(sku, need) or 0


def decode_need(facts: Mapping[str, Value]) -> tuple[int, int, str] | None:
    """(streams per host, streams per engine, codec) of the facts' decode need."""
    streams = facts.get("workload.decode_streams_per_host")
    per_engine = facts.get("workload.decode_streams_per_engine")
    codec = facts.get("workload.decode_codec")
    if not isinstance(streams, (int, float)) or isinstance(streams, bool) or streams <= 0:
        return None
    if not isinstance(per_engine, (int, float)) or not isinstance(codec, str):
        return None
    return int(streams), max(1, int(per_engine)), codec


#: The derived decode facts, null without a decode need.
DERIVED_NAMES = (
    "workload.decode_streams_per_host",
    "workload.decode_streams_per_engine",
    "workload.decode_codec_name",
    "workload.cards_needed_for_io",
)


def derived(
    values: Mapping[str, Value],
    policy: DecodePolicy,
    hosts: int,
    skus: Sequence[Sku] = (),
    max_width: float | None = None,
) -> dict[str, Value]:
    """The derived decode facts: the streams one host decodes, one engine's share, the
    codec as the report writes it, and the fewest cards per host the streams need of
    any card in ``skus`` no wider than ``max_width`` (0 without streams; null when no
    such card's decoders are known): a lower bound on the cards per host set by a need
    other than memory and jobs, which JOBS-002 reads."""
    count = values.get("workload.decode_stream_count")
    codec = values.get("workload.decode_codec")
    resolution = values.get("workload.decode_resolution")
    if not isinstance(count, int) or not isinstance(codec, str) or not isinstance(resolution, str):
        return {**dict.fromkeys(DERIVED_NAMES), "workload.cards_needed_for_io": 0}
    per_host = math.ceil(count / max(1, hosts))
    per_engine = max(1, streams_per_engine(policy, codec, resolution))
    need = (per_host, per_engine, codec)
    fitting = (s for s in skus if max_width is None or s.slot_width <= max_width)
    counts = [n for n in (cards_needed(s, need) for s in fitting) if n is not None]
    return {
        "workload.decode_streams_per_host": per_host,
        "workload.decode_streams_per_engine": per_engine,
        "workload.decode_codec_name": CODEC_WORDS.get(codec, codec),
        "workload.cards_needed_for_io": min(counts) if counts else None,
    }


def need_words(count: int, codec: str, resolution: str) -> str:
    """ "48 H.264 1080p30 streams", as a buyer says it."""
    return f"{count} {CODEC_WORDS.get(codec, codec)} {resolution} stream{'s' * (count != 1)}"
