"""The questions about video decode streams (``workload.decode_streams``, issue #30 §2):
asked of work that may decode video, after the jobs; "none" (the default) leaves the
table out; "don't know" to the codec is planned as H.264 and the answer says so; a
refused answer names the words the question takes.
"""

from __future__ import annotations

import pytest

from gpuadvisor.ask import QUESTIONS, Answers, profile_document, run_interview
from gpuadvisor.ask.decode_questions import CODEC_ASSUMED_NOTE
from gpuadvisor.ask.flow import read_answer, refusal
from gpuadvisor.inputs.profile import parse_profile

from .test_ask import ScriptedDialogue

BY_FIELD = {q.field: q for q in QUESTIONS}
COUNT = "workload.decode_streams.count"
CODEC = "workload.decode_streams.codec"
RESOLUTION = "workload.decode_streams.resolution"
CAMERAS: dict[str, str | list[str]] = {
    "workload.kind": "inference",
    "workload.objective": "throughput",
}
CAMERAS |= {"workload.vram_need_gib": "6"}


def asked(answers: dict[str, str | list[str]]) -> ScriptedDialogue:
    dialogue = ScriptedDialogue(answers)
    dialogue.interview = run_interview(dialogue)  # type: ignore[attr-defined]
    return dialogue


def refused(field: str, text: str) -> str:
    question = BY_FIELD[field]
    with pytest.raises(ValueError) as caught:
        read_answer(question, Answers({"workload.kind": "inference"}), text)
    return refusal(question, caught.value)


def test_ninety_six_h264_cameras_at_1080p30_are_written_to_the_profile() -> None:
    flow = asked({**CAMERAS, COUNT: "96 cameras", CODEC: "H.264", RESOLUTION: "1080p 30"})
    decode = flow.interview.profile.workload.decode_streams  # type: ignore[attr-defined]
    assert decode is not None
    assert (decode.count, decode.codec, decode.resolution) == (96, "h264", "1080p30")
    jobs = flow.asked.index("workload.concurrent_jobs")
    assert flow.asked[jobs + 1 : jobs + 4] == [COUNT, CODEC, RESOLUTION]
    text = profile_document(flow.interview.profile, flow.interview.unknown)  # type: ignore[attr-defined]
    assert "[workload.decode_streams]" in text
    assert parse_profile(text).workload.decode_streams == decode


def test_none_by_default_leaves_the_table_unset_and_asks_no_codec() -> None:
    flow = asked(CAMERAS)
    assert COUNT in flow.asked
    assert CODEC not in flow.asked and RESOLUTION not in flow.asked
    at = flow.said.index(BY_FIELD[COUNT].prompt)
    assert "  Default: none" in flow.said[at:]
    assert flow.interview.profile.workload.decode_streams is None  # type: ignore[attr-defined]
    text = profile_document(flow.interview.profile, flow.interview.unknown)  # type: ignore[attr-defined]
    assert "\n# count =  # Streams decoded at the same time.\n" in text  # commented out
    assert parse_profile(text).workload.decode_streams is None


def test_training_and_cad_work_are_not_asked_about_video() -> None:
    for kind in ("training", "cad-cae", "vdi"):
        flow = asked({**CAMERAS, "workload.kind": kind})
        assert COUNT not in flow.asked, kind


def test_media_work_is_asked_about_video() -> None:
    flow = asked({**CAMERAS, "workload.kind": "media"})
    assert COUNT in flow.asked


def test_a_codec_not_known_is_planned_as_h264_and_the_answer_says_so() -> None:
    flow = asked({**CAMERAS, COUNT: "48", CODEC: "don't know", RESOLUTION: "4k15"})
    decode = flow.interview.profile.workload.decode_streams  # type: ignore[attr-defined]
    assert decode is not None and (decode.codec, decode.resolution) == ("h264", "4k15")
    assert f"  {CODEC_ASSUMED_NOTE}" in flow.said
    assert CODEC_ASSUMED_NOTE == (
        "Planned as H.264: most cameras send H.264 or H.265, and H.264 takes a decoder "
        "about twice the work of H.265, so cards enough for it are enough for either."
    )


@pytest.mark.parametrize(
    ("text", "codec"), [("2", "hevc"), ("H.265", "hevc"), ("HEVC", "hevc"), ("av1", "av1")]
)
def test_codecs_are_read_as_people_write_them(text: str, codec: str) -> None:
    assert read_answer(BY_FIELD[CODEC], Answers({}), text) == (codec, None)


@pytest.mark.parametrize(
    ("text", "resolution"),
    [("1080p30", "1080p30"), ("1080p@30fps", "1080p30"), ("4K 15 fps", "4k15"), ("720p5", "720p5")],
)
def test_resolutions_are_read_as_people_write_them(text: str, resolution: str) -> None:
    assert read_answer(BY_FIELD[RESOLUTION], Answers({}), text) == (resolution, None)


def test_bad_answers_name_the_words_each_question_takes() -> None:
    assert refused(COUNT, "lots") == (
        "Not accepted: give a whole number of streams, such as 48, or none if the cards "
        "decode no video. Please answer again."
    )
    assert refused(COUNT, "0") == (
        "Not accepted: give a number of streams of 1 or more, or none if the cards decode "
        "no video. Please answer again."
    )
    assert refused(CODEC, "mjpeg") == (
        "Not accepted: 'mjpeg' is not a codec gpuadvisor knows; answer h264 (H.264, AVC), "
        "hevc (H.265) or av1, or don't know (planned as H.264). Please answer again."
    )
    wrong_size = (
        "Not accepted: give the frame size and the frames per second as one word, such as "
        "1080p30 or 4k15 (720p, 1080p, 1440p, 2160p or 4k, then 1 to 120 frames per second). "
        "Please answer again."
    )
    assert refused(RESOLUTION, "1080") == wrong_size
    assert refused(RESOLUTION, "1080p240") == wrong_size
    assert refused(RESOLUTION, "8k30") == wrong_size


def test_a_resolution_is_needed_once_streams_are_counted() -> None:
    flow = asked({**CAMERAS, COUNT: "8", CODEC: "hevc", RESOLUTION: ["", "1080p25"]})
    assert "  This one needs an answer." in flow.said
    decode = flow.interview.profile.workload.decode_streams  # type: ignore[attr-defined]
    assert decode is not None and decode.resolution == "1080p25"
