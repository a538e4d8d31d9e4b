"""The questions about ``[workload.decode_streams]``: the camera or video streams the
cards decode at once (video analytics), counted against their NVDEC engines.

Asked for work that may decode video (inference, media, mixed). The count comes first
and "none" (its default) means the work decodes no video: the table is left out and the
other two are not asked. The codec's "don't know" is planned as H.264, the slower of the
two camera codecs to decode (rules/_policy.toml [decode]), and the answer says so.
Spliced into ``QUESTIONS`` after the question about jobs; kept apart so the questions
module stays readable.
"""

from __future__ import annotations

import re
from typing import Any, Final

from gpuadvisor.ask.fields import Answers
from gpuadvisor.ask.question import Question
from gpuadvisor.ask.units import Converted, is_unknown

#: Work that may decode camera or video streams on the cards.
VIDEO_KINDS: Final = ("inference", "media", "mixed")

COUNT_FIELD: Final = "workload.decode_streams.count"
CODEC_FIELD: Final = "workload.decode_streams.codec"
RESOLUTION_FIELD: Final = "workload.decode_streams.resolution"

#: What "don't know" to the codec question is planned as.
CODEC_IF_UNKNOWN: Final = "h264"
CODEC_ASSUMED_NOTE: Final = (
    "Planned as H.264: most cameras send H.264 or H.265, and H.264 takes a decoder "
    "about twice the work of H.265, so cards enough for it are enough for either."
)

#: Codec names as people write them, to the profile's words.
_CODEC_WORDS: Final = {
    "1": "h264", "h264": "h264", "h.264": "h264", "avc": "h264", "x264": "h264",
    "2": "hevc", "hevc": "hevc", "h265": "hevc", "h.265": "hevc", "x265": "hevc",
    "3": "av1", "av1": "av1",
}  # fmt: skip
_CODECS_ACCEPTED: Final = "h264 (H.264, AVC), hevc (H.265) or av1"

_SIZES: Final = ("720p", "1080p", "1440p", "2160p", "4k")
_RESOLUTIONS_ACCEPTED: Final = (
    "give the frame size and the frames per second as one word, such as 1080p30 or 4k15 "
    "(720p, 1080p, 1440p, 2160p or 4k, then 1 to 120 frames per second)"
)
_NO_STREAMS: Final = frozenset({"0", "no", "-", "n/a", "na", "zero"})


def _video_work(a: Answers) -> bool:
    """Work that may decode video, whose starting file does not already say (a profile
    written out states ``decode_streams`` even when it has none)."""
    return a["workload.kind"] in VIDEO_KINDS and not a.known("workload.decode_streams")


def stream_count(text: str) -> Any:
    """A number of streams ("96", "96 streams", "96 cameras"); "none" is read before
    this (the question's unknown answer, as is "don't know"), and "0" or "no" are refused
    with it named."""
    cleaned = text.strip().lower().replace(",", "").replace("_", "")
    cleaned = re.sub(r"\s*(streams?|cameras?|feeds?)$", "", cleaned)
    if cleaned in _NO_STREAMS:
        raise ValueError("give a number of streams of 1 or more")
    if not cleaned.isdigit():
        raise ValueError("give a whole number of streams, such as 48")
    return int(cleaned)


def codec(text: str) -> Any:
    """A codec in the profile's words; "don't know" is planned as H.264 (said)."""
    if is_unknown(text):
        return Converted(CODEC_IF_UNKNOWN, CODEC_ASSUMED_NOTE)
    cleaned = text.strip().lower().replace(" ", "").replace("-", "")
    if cleaned not in _CODEC_WORDS:
        raise ValueError(
            f"{text.strip()!r} is not a codec gpuadvisor knows; answer {_CODECS_ACCEPTED}"
        )
    return _CODEC_WORDS[cleaned]


def resolution(text: str) -> Any:
    """ "1080p30", also written "1080p 30", "1080p@30fps" or "4K 15 fps"."""
    cleaned = text.strip().lower().replace(" ", "").replace("@", "").removesuffix("fps")
    found = re.fullmatch(r"(720p|1080p|1440p|2160p|4k|uhd)(\d{1,3})", cleaned)
    if found is None or not 1 <= int(found.group(2)) <= 120:
        raise ValueError(_RESOLUTIONS_ACCEPTED)
    size = "4k" if found.group(1) == "uhd" else found.group(1)
    assert size in _SIZES
    return f"{size}{int(found.group(2))}"


DECODE_QUESTIONS: Final[tuple[Question, ...]] = (
    Question(
        COUNT_FIELD,
        "How many camera or video streams do the cards decode at the same time (video "
        "analytics: detection or tracking on live feeds)? Answer none if they decode no video.",
        "Video is decoded on a card's fixed hardware decoders (NVDEC), not on its compute "
        "cores, and each decoder takes only so many streams: many cameras can need more "
        "cards than the model's memory does; count every stream of every machine; if "
        "unsure, answer none.",
        when=_video_work,
        convert=stream_count,
        unknown_answer="none",
        units=("streams", "cameras"),
        also="none if the cards decode no video",
    ),
    Question(
        CODEC_FIELD,
        "How are those streams encoded?",
        "H.265 takes a decoder about half the work of H.264 at the same picture size, and "
        "AV1 needs a recent card's decoders; the camera's or the recorder's settings page "
        "says which; if unsure, answer don't know and they are planned as H.264.",
        depends_on=(COUNT_FIELD,),
        convert=codec,
        choices=(
            ("h264", "H.264 (AVC), what most cameras send"),
            ("hevc", "H.265 (HEVC)"),
            ("av1", "AV1"),
        ),
        reads_unknown=True,
        also="don't know (planned as H.264)",
    ),
    Question(
        RESOLUTION_FIELD,
        "What frame size and frame rate does one stream have, as one word such as 1080p30 "
        "(1080p at 30 frames a second) or 4k15?",
        "A decoder's work grows with pixels times frames per second: one 4k30 stream costs "
        "as much as four 1080p30 ones; the camera's settings page states both; for streams "
        "of several sizes, give the largest (the report then plans with room to spare).",
        depends_on=(COUNT_FIELD,),
        convert=resolution,
    ),
)
