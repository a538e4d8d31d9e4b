"""The questions about the displays each machine drives (``requirements.displays`` and
``requirements.display_mode``): a video wall, a control room or a desk of monitors,
where the panels, not the memory, set how many cards a machine takes.

Asked for interactive visual work (visualization, mixed). The count comes first and
"none" (its default) means no display need beyond the usual monitor: the mode is then
not asked. The mode's "don't know" is the card's plain outputs ("any"). Spliced into
``QUESTIONS`` after the question about display sync; kept apart so the questions module
stays readable.
"""

from __future__ import annotations

from typing import Any, Final

from gpuadvisor.ask.fields import Answers
from gpuadvisor.ask.question import Question

#: Work that may drive a wall of panels or many monitors from one machine.
DISPLAY_KINDS: Final = ("visualization", "mixed")

COUNT_FIELD: Final = "requirements.displays"
MODE_FIELD: Final = "requirements.display_mode"

_NONE: Final = frozenset({"0", "no", "none", "-", "n/a", "na", "zero"})


def display_count(text: str) -> Any:
    """A number of displays ("12", "12 panels", "12 monitors"); "none" or "0" is 0."""
    cleaned = text.strip().lower().replace(",", "")
    for word in ("displays", "display", "panels", "panel", "monitors", "monitor", "screens"):
        cleaned = cleaned.removesuffix(word).strip()
    if cleaned in _NONE:
        return 0
    if not cleaned.isdigit():
        raise ValueError("give a whole number of displays, such as 12, or none")
    return int(cleaned)


def _visual_work(a: Answers) -> bool:
    return a["workload.kind"] in DISPLAY_KINDS


def _has_displays(a: Answers) -> bool:
    count = a[COUNT_FIELD]
    return _visual_work(a) and isinstance(count, int) and count > 0


DISPLAY_QUESTIONS: Final[tuple[Question, ...]] = (
    Question(
        COUNT_FIELD,
        "How many displays (panels, monitors, projectors) must each machine drive at once?",
        "A card drives only so many displays; a wall of 12 panels takes 3 cards of 4 "
        "outputs. Answer none for one or two ordinary monitors.",
        when=_visual_work,
        convert=display_count,
    ),
    Question(
        MODE_FIELD,
        "At what resolution and refresh do those displays run?",
        "At 4K or 8K and 60 Hz a card drives fewer displays than it has outputs; if "
        "unsure, answer any.",
        when=_has_displays,
        choices=(
            ("any", "don't know, or below 4K: every output of the card counts"),
            ("4k60", "4K (3840 x 2160) at 60 Hz"),
            ("8k60", "8K (7680 x 4320) at 60 Hz"),
        ),
    ),
)
