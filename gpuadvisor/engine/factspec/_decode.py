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
)
