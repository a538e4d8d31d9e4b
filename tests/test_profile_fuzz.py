"""Whatever a profile holds, loading it gives a Profile or an InputError, and a profile
that loads gives a decision and a report: no other exception, ever.

- generated: documents built from the profile's own fields with values drawn from the
  valid choices, the bounds and just past them, other types, NaN, infinities, denormals
  and absurd numbers, written as TOML or JSON;
- structure-aware: the worked examples mutated (truncation, flips, shuffled, duplicated
  and deleted lines, absurd numbers, stray tokens), through ``advise`` and through
  ``ask --from``'s reading of a starting profile.

Bounded for CI (``max_examples``, ``deadline``); ``GPUADVISOR_FUZZ_EXAMPLES`` scales it.
A failing input is saved to ``fixtures/regressions`` as ``profile-fuzz-*``.
"""

from __future__ import annotations

import json
import os
import random
from datetime import timedelta
from typing import Any, get_args, get_origin

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.ask import starting_answers
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.profile import SECTIONS, Profile, parse_profile
from gpuadvisor.inputs.textio import parse_document
from gpuadvisor.pipeline import advise_profile
from gpuadvisor.render.report import render
from gpuadvisor.resources import data_dir

from .fuzz_support import keep_as_regression, mutate

EXAMPLES = int(os.environ.get("GPUADVISOR_FUZZ_EXAMPLES", "200"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CATALOG = load_catalog()
RULES = load_rules()
WORKED = {
    p.name: p.read_text(encoding="utf-8") for p in sorted(data_dir("examples").glob("*.toml"))
}

NUMBERS: list[Any] = [
    0,
    1,
    2,
    -1,
    0.5,
    0.01,
    0.009,
    4096,
    4096.5,
    1024,
    1025,
    3_600_000,
    1e9,
    1e308,
    5e-324,
    float("nan"),
    float("inf"),
    2**63,
    2**64,
    16,
    20,
    3,
    5,
    6,
    8,
    100_000,
]
OTHERS: list[Any] = [
    "",
    "20",
    "yes",
    "true",
    True,
    False,
    [],
    ["a"],
    {"x": 1},
    "x" * 300,
    "<script>",
    "{{ 7*7 }}",
    '#panic("x")',
    "\x07",
    "²",
]


def _literals(annotation: Any) -> tuple[Any, ...]:
    for arg in (annotation, *get_args(annotation)):
        if get_origin(arg) is not None and str(get_origin(arg)).endswith("Literal"):
            return get_args(arg)
    return ()


SANE_NUMBERS: list[Any] = [1, 2, 3, 4, 8, 16, 20, 0.5, 2.5, 40, 1000]
SANE_TEXT: list[Any] = ["", "Support chat", "<b>ML</b> & {{ team }}", "#let x = 1", "a\nb"]


def _sane(draw: st.DrawFn, info: Any) -> Any:
    """A value of the field's own type, usually within its bounds."""
    choices = _literals(info.annotation)
    if choices:
        return draw(st.sampled_from(choices))
    kinds = {info.annotation, *get_args(info.annotation)}
    if bool in kinds:
        return draw(st.booleans())
    if int in kinds or float in kinds:
        return draw(st.sampled_from(SANE_NUMBERS))
    if str in kinds:
        return draw(st.sampled_from(SANE_TEXT))
    return draw(st.lists(st.sampled_from(SANE_TEXT[1:]), max_size=3))


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    """Profiles with every value of the right kind, but for a share of wrong ones."""
    wrong = draw(st.sampled_from([0.0, 0.0, 0.05, 0.3]))
    document: dict[str, Any] = {}
    if draw(st.booleans()):
        document["schema"] = (
            "gpuadvisor/profile/v1"
            if wrong < 0.3
            else draw(st.sampled_from(["gpuadvisor/profile/v1", "gpuadvisor/profile/v2", 1]))
        )
    for section, model in SECTIONS.items():
        if section != "workload" and draw(st.booleans()):
            continue
        fields: dict[str, Any] = {}
        for name, info in model.model_fields.items():
            if not (info.is_required() or draw(st.booleans())):
                continue
            if draw(st.floats(0, 1)) < wrong:
                fields[name] = draw(st.sampled_from(NUMBERS + OTHERS))
            else:
                fields[name] = _sane(draw, info)
        if wrong and draw(st.integers(0, 20)) == 0:
            fields[draw(st.sampled_from(["vram_ned_gib", "kinds", "__class__"]))] = 1
        document[section] = fields
    return document


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if value != value else ("inf" if value == float("inf") else repr(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def _as_toml(document: dict[str, Any]) -> str:
    lines = [f"schema = {_toml(document['schema'])}"] if "schema" in document else []
    for section, fields in document.items():
        if section == "schema":
            continue
        lines.append(f"[{section}]")
        lines += [f"{name} = {_toml(value)}" for name, value in fields.items()]
    return "\n".join(lines) + "\n"


def _decides(text: str, *, report: bool) -> None:
    try:
        profile = parse_profile(text, "fuzz.toml")
        assert isinstance(profile, Profile)
        if report:
            decision = advise_profile(
                profile,
                profile_sha256="0" * 64,
                profile_file="fuzz.toml",
                catalog=CATALOG,
                rules=RULES,
                sensitivity=False,
            )
            render(decision, "md").encode("utf-8")
    except InputError:
        return
    except Exception:
        keep_as_regression(text, prefix="profile-fuzz", suffix=".toml")
        raise


@SETTINGS
@given(documents(), st.booleans())
def test_generated_profiles(document: dict[str, Any], as_json: bool) -> None:
    text = json.dumps(document) if as_json else _as_toml(document)
    _decides(text, report=False)


@settings(SETTINGS, max_examples=max(30, EXAMPLES // 6), deadline=timedelta(seconds=20))
@given(documents())
def test_generated_profiles_through_a_report(document: dict[str, Any]) -> None:
    _decides(json.dumps(document), report=True)


@SETTINGS
@given(st.sampled_from(sorted(WORKED)), st.randoms(use_true_random=False), st.integers(1, 5))
def test_mutated_worked_examples(name: str, rng: random.Random, steps: int) -> None:
    _decides(mutate(WORKED[name], rng, steps), report=rng.random() < 0.1)


@SETTINGS
@given(st.sampled_from(sorted(WORKED)), st.randoms(use_true_random=False), st.integers(1, 5))
def test_mutated_starting_profiles_for_ask(name: str, rng: random.Random, steps: int) -> None:
    text = mutate(WORKED[name], rng, steps)
    try:
        starting_answers(parse_document(text, "start.toml"), name="start.toml", text=text)
    except InputError:
        return
    except Exception:
        keep_as_regression(text, prefix="profile-fuzz", suffix=".toml")
        raise
