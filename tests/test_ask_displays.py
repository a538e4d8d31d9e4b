"""The questionnaire's display questions (gpuadvisor/ask/display_questions.py)."""

from __future__ import annotations

import pytest

from gpuadvisor.ask.display_questions import DISPLAY_QUESTIONS, display_count
from gpuadvisor.ask.fields import Answers
from gpuadvisor.ask.questions import QUESTIONS


def test_display_count_reads_numbers_and_none() -> None:
    assert display_count("12") == 12
    assert display_count("12 panels") == 12
    assert display_count("none") == 0
    with pytest.raises(ValueError, match="whole number of displays"):
        display_count("a dozen")


def test_display_questions_follow_the_sync_question() -> None:
    fields = [q.field for q in QUESTIONS]
    at = fields.index("requirements.display_sync")
    assert fields[at + 1 : at + 3] == ["requirements.displays", "requirements.display_mode"]
    count, mode = DISPLAY_QUESTIONS
    assert [value for value, _ in mode.choices] == ["any", "4k60", "8k60"]
    assert "don't know" in mode.choices[0][1]
    assert count.prompt.startswith("How many displays")


def test_the_mode_is_asked_only_for_visual_work_with_displays() -> None:
    count, mode = DISPLAY_QUESTIONS
    wall = Answers({"workload.kind": "visualization", "requirements.displays": 12})
    assert count.applies(wall) and mode.applies(wall)
    desk = Answers({"workload.kind": "visualization", "requirements.displays": 0})
    assert count.applies(desk) and not mode.applies(desk)
    training = Answers({"workload.kind": "training"})
    assert not count.applies(training) and not mode.applies(training)
