"""Facts of a video decode need (``workload.decode_streams``, CONTRACT §7)."""

from __future__ import annotations

from gpuadvisor.engine.factspec._base import FactSpec

#: The profile's [workload.decode_streams] table, one fact per key (null without one).
DECODE_PROFILE_FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "workload.decode_stream_count",
        "number",
        "Video streams decoded at once (workload.decode_streams.count).",
        nullable=True,
        source="profile",
    ),
    FactSpec(
        "workload.decode_codec",
        "string",
        "How the streams are encoded (workload.decode_streams.codec).",
        choices=("h264", "hevc", "av1"),
        nullable=True,
        source="profile",
    ),
    FactSpec(
        "workload.decode_resolution",
        "string",
        "Frame size and rate of one stream, such as 1080p30 (workload.decode_streams).",
        nullable=True,
        source="profile",
    ),
)

#: What the engine works out from them with rules/_policy.toml [decode].
DECODE_DERIVED_FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "workload.decode_streams_per_host",
        "number",
        "The streams one host decodes: the stream count spread over platform.hosts.",
        nullable=True,
        source="profile",
    ),
    FactSpec(
        "workload.decode_streams_per_engine",
        "number",
        "Streams of this codec and resolution one NVDEC engine decodes (rules/_policy.toml "
        "[decode]).",
        nullable=True,
        source="policy",
    ),
    FactSpec(
        "workload.decode_codec_name",
        "string",
        "The streams' codec as the report writes it: H.264, H.265 (HEVC) or AV1.",
        nullable=True,
        source="profile",
    ),
    FactSpec(
        "workload.cards_needed_for_io",
        "number",
        "The fewest cards per host a need other than memory and jobs sets (the video "
        "streams' decoders), over the catalog's cards no wider than the host's slots: 0 "
        "without such a need, null when no such card's decoders are known.",
        nullable=True,
        source="catalog",
    ),
)
