"""PromQL text: the ``--window`` duration, label selectors, and the expressions built
from them.

Nothing here talks to Prometheus. A duration or a selector the user gave is checked
here, before any query, so that a typo is named (``--window``, ``--selector``, or the
profiles file's group) instead of coming back as Prometheus's ``bad_data``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final, Literal

from gpuadvisor.errors import InputError

#: Prometheus's duration units, largest first, in seconds.
_UNITS: Final = (("y", 365 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60))
_DURATION: Final = re.compile(
    r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$"
)
#: The shortest and longest window a fleet is judged over.
MIN_WINDOW_S: Final = 10 * 60
MAX_WINDOW_S: Final = 400 * 86400

_LABEL: Final = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_OPS: Final = ("=~", "!~", "!=", "=")
Op = Literal["=", "!=", "=~", "!~"]


def parse_window(text: str, *, field: str = "--window") -> int:
    """Seconds in a Prometheus duration such as ``7d``, ``36h`` or ``1d12h``."""
    stripped = text.strip()
    found = _DURATION.match(stripped)
    if not stripped or found is None:
        raise InputError(
            f"{text!r} is not a duration",
            field=field,
            hint="write it as Prometheus does: a number and a unit, largest unit first "
            "(7d, 36h, 1d12h, 90m; units y w d h m s)",
        )
    multipliers = [seconds for _, seconds in _UNITS] + [1]
    parts = zip(found.groups(), multipliers, strict=True)
    seconds = sum(int(part or 0) * unit for part, unit in parts)
    if not MIN_WINDOW_S <= seconds <= MAX_WINDOW_S:
        raise InputError(
            f"{text!r} is {seconds} s; the window must be between 10m and 400d",
            field=field,
            hint="a window shorter than a few scrapes says little; one longer than "
            "Prometheus's retention finds no samples",
        )
    return seconds


def duration(seconds: int) -> str:
    """``seconds`` as a Prometheus duration in days, hours, minutes and seconds
    (``604800`` -> ``7d``)."""
    if seconds <= 0:
        return "0s"
    parts = []
    rest = seconds
    # Days at most, as people write windows (7d, not 1w).
    for unit, size in (*_UNITS[2:], ("s", 1)):
        if rest >= size:
            parts.append(f"{rest // size}{unit}")
            rest %= size
    return "".join(parts)


@dataclass(frozen=True)
class Matcher:
    label: str
    op: Op
    value: str

    def text(self) -> str:
        # JSON's string escapes are Go's (PromQL strings are Go-quoted).
        return f"{self.label}{self.op}{json.dumps(self.value, ensure_ascii=False)}"


@dataclass(frozen=True)
class Selector:
    """Label matchers, as in ``{cluster="a", role=~"train|eval"}``."""

    matchers: tuple[Matcher, ...] = ()

    def text(self) -> str:
        return "{" + ", ".join(m.text() for m in self.matchers) + "}"

    def inside(self) -> str:
        """The matchers without braces, to join with others in one selector."""
        return ", ".join(m.text() for m in self.matchers)

    def and_(self, other: Selector) -> Selector:
        return Selector(self.matchers + other.matchers)


EVERYTHING: Final = Selector()


def parse_selector(text: str, *, field: str, file: str | None = None) -> Selector:
    """The selector ``text`` (braces optional: ``cluster="a"`` reads as ``{cluster="a"}``)."""
    source = text.strip()
    if source.startswith("{"):
        if not source.endswith("}"):
            raise _bad(text, "it opens '{' and does not close it", field, file)
        source = source[1:-1]
    matchers: list[Matcher] = []
    at = 0
    while True:
        at = _skip_space(source, at)
        if at >= len(source):
            break
        name = _LABEL.match(source, at)
        if name is None:
            raise _bad(text, f"a label name is expected at {source[at : at + 12]!r}", field, file)
        at = _skip_space(source, name.end())
        op = next((o for o in _OPS if source.startswith(o, at)), None)
        if op is None:
            raise _bad(
                text, f"after {name.group()!r} an operator (= != =~ !~) is expected", field, file
            )
        value, at = _string(source, _skip_space(source, at + len(op)), text, field, file)
        matchers.append(_matcher(name.group(), op, value, text, field, file))  # type: ignore[arg-type]
        at = _skip_space(source, at)
        if at < len(source):
            if source[at] != ",":
                raise _bad(
                    text,
                    f"',' is expected between matchers at {source[at : at + 12]!r}",
                    field,
                    file,
                )
            at += 1
    return Selector(tuple(matchers))


def _matcher(label: str, op: Op, value: str, text: str, field: str, file: str | None) -> Matcher:
    if label == "__name__":
        raise _bad(
            text, "the metric name is gpuadvisor's to choose; select by other labels", field, file
        )
    if op in ("=~", "!~"):
        try:
            re.compile(value)
        except re.error as exc:
            raise _bad(text, f"{value!r} is not a regular expression: {exc}", field, file) from None
    return Matcher(label, op, value)


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _string(source: str, at: int, text: str, field: str, file: str | None) -> tuple[str, int]:
    """A PromQL string literal at ``at``: double or single quotes with Go escapes, or
    back quotes taken as they are."""
    if at >= len(source) or source[at] not in "\"'`":
        raise _bad(text, "a quoted value is expected after the operator", field, file)
    quote = source[at]
    end = at + 1
    while end < len(source) and source[end] != quote:
        end += 2 if source[end] == "\\" and quote != "`" else 1
    if end >= len(source):
        raise _bad(text, "a quoted value is not closed", field, file)
    body = source[at + 1 : end]
    if quote == "`":
        return body, end + 1
    if quote == "'":
        body = body.replace("\\'", "'").replace('"', '\\"')
    try:
        value = json.loads(f'"{body}"')
    except json.JSONDecodeError:
        raise _bad(
            text,
            f"the value {source[at : end + 1]} has an escape PromQL does not know",
            field,
            file,
        ) from None
    return str(value), end + 1


def _bad(text: str, problem: str, field: str, file: str | None) -> InputError:
    return InputError(
        f"{text!r} is not a label selector: {problem}",
        field=field,
        file=file,
        hint='write it as PromQL does, e.g. {cluster="a", role=~"train|eval"}',
    )


# -- expressions ----------------------------------------------------------------------

#: Series of MIG instances carry GPU_I_ID; a physical GPU's own series do not.
PHYSICAL: Final = Matcher("GPU_I_ID", "=", "")


def vector(metric: str, selector: Selector) -> str:
    """``metric{matchers}``; an empty selector adds no braces."""
    inner = selector.inside()
    return f"{metric}{{{inner}}}" if inner else metric


def over_window(function: str, metric: str, selector: Selector, window_s: int) -> str:
    """``function(metric{...}[window])``, e.g. ``avg_over_time(DCGM_FI_DEV_GPU_UTIL{...}[7d])``."""
    return f"{function}({vector(metric, selector)}[{duration(window_s)}])"


def by(labels: tuple[str, ...], aggregation: str, inner: str) -> str:
    """``aggregation by (labels) (inner)``."""
    return f"{aggregation} by ({', '.join(labels)}) ({inner})"
