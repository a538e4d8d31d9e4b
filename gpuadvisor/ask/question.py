"""What one question is: the profile field it fills, its words, when it applies, how a
typed answer is read, and where it sits in the questionnaire (its section, its group)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from gpuadvisor.ask.fields import Answers, Predicate, always

Converter = Callable[[str], Any]

#: The group of questions few buyers can answer (power supply, PCIe generation, CPU
#: sockets, wall circuit, slot positions): asked together, "don't know" by default.
HARDWARE: Final = "hardware"


@dataclass(frozen=True)
class Question:
    """One question about one profile field.

    ``convert`` turns the typed text into the raw value pydantic validates (raising
    ValueError with a plain message when it cannot); None picks one from the field's
    type. ``choices`` explains each value of a Literal field in plain words. ``units``
    are words accepted after a number ("40 GB"). ``unknown_answer`` is a word that
    leaves the field unstated and is the default, so later questions can tell "not
    decided yet" apart. ``suggest`` proposes a default from earlier answers instead of
    the model's. ``depends_on`` names fields this question is about only once they are
    known: it is asked only when each of them was answered, and when one of them was
    answered with its ``unknown_answer``, this field is not known either (written as
    such, never as the model's default passed off as an answer). ``group`` gathers
    questions asked together (:data:`HARDWARE`). ``reads_unknown``: the converter
    itself reads "don't know" (the memory question, where it means "describe the
    model"); ``also`` names what else it accepts, for its refusals.
    """

    field: str
    prompt: str
    why: str
    when: Predicate = always
    convert: Converter | None = None
    choices: tuple[tuple[str, str], ...] = ()
    units: tuple[str, ...] = ()
    unknown_answer: str | None = None
    suggest: Callable[[Answers], Any] | None = None
    depends_on: tuple[str, ...] = ()
    group: str = ""
    reads_unknown: bool = False
    also: str = ""
    aside: Callable[[Answers], str | None] | None = None
    check: Callable[[Any, Answers], str | None] | None = None
    replaces: tuple[tuple[str, str], ...] = ()

    def applies(self, answers: Answers) -> bool:
        """Whether to ask this question after these answers (``ask`` and the web page)."""
        return all(answers.known(p) for p in self.depends_on) and self.when(answers)

    def aside_for(self, answers: Answers) -> str:
        """The line said under the prompt for these answers ("" for none)."""
        return (self.aside(answers) or "") if self.aside is not None else ""
