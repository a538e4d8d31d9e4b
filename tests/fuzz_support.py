"""What the fuzz tests share: structure-aware mutation of real files, and keeping an
input that broke gpuadvisor as a regression case."""

from __future__ import annotations

import hashlib
import random
import re

from .conftest import FIXTURES

REGRESSIONS = FIXTURES / "regressions"


def keep_as_regression(text: str, prefix: str = "evidence-fuzz", suffix: str = ".txt") -> None:
    """Save an input that broke gpuadvisor where test_regressions replays it."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    path = REGRESSIONS / f"{prefix}-{digest}{suffix}"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")


#: What replaces a number: the values no tool prints, and the spellings of "absent".
ABSURD = [
    "1e999",
    "-1e999",
    "1e400",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "9" * 30,
    "9" * 5000,
    "-1",
    "-0",
    "0x10",
    "1,024",
    "1.2.3",
    ".5",
    "5.",
    "²",
    "٣",
    "",
    "N/A",
    "[N/A]",
    "ERR!",
    "1e15",
]
#: Stray tokens a paste or an editor can leave.
TOKENS = [
    "\x00",
    "\x1b[4m",
    "\u2028",
    "\ufeff",
    "\r",
    "\t",
    ":",
    "|",
    "[",
    "(",
    "<",
    "&",
    '"',
    "GPU0",
    "NV999",
    "X",
    "Active",
    "Enabled",
    "\\",
    "=" * 40,
    " " * 200,
]
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def mutate(text: str, rng: random.Random, steps: int) -> str:
    """``text`` after ``steps`` edits of the kinds pasted and hand-edited files suffer."""
    for _ in range(steps):
        if not text:
            return rng.choice(TOKENS)
        lines = text.splitlines(keepends=True)
        at = rng.randrange(len(text))
        operation = rng.randrange(8)
        if operation == 0:  # truncation
            text = text[:at]
        elif operation == 1:  # a character flip
            text = (
                text[:at]
                + chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x3000)]))
                + text[at + 1 :]
            )
        elif operation == 2:  # shuffled lines
            rng.shuffle(lines)
            text = "".join(lines)
        elif operation == 3:  # a duplicated line
            line = rng.randrange(len(lines))
            lines.insert(line, lines[line] * rng.randint(2, 50))
            text = "".join(lines)
        elif operation == 4:  # a deleted line
            del lines[rng.randrange(len(lines))]
            text = "".join(lines)
        elif operation == 5:  # an absurd number
            numbers = list(_NUMBER.finditer(text))
            if numbers:
                found = rng.choice(numbers)
                text = text[: found.start()] + rng.choice(ABSURD) + text[found.end() :]
        elif operation == 6:  # a stray token
            text = text[:at] + rng.choice(TOKENS) + text[at:]
        else:  # a cut-out span
            end = min(len(text), at + rng.randrange(1, 200))
            text = text[:at] + text[end:]
    return text
