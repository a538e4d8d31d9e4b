"""Every rule's examples run here, one test each: RULE-ID::example-name."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.decision.findings import fill
from gpuadvisor.engine.rulecheck import lint_rule, lint_rules, run_example
from gpuadvisor.engine.rules import Example, Rule, RuleBase, load_rule_file, load_rules
from gpuadvisor.errors import InputError
from gpuadvisor.vocabulary import CATEGORIES

_BUNDLED = load_rules()
_CASES = [(rule, example) for rule in _BUNDLED.rules for example in rule.data.examples]


@pytest.mark.parametrize(("rule", "example"), _CASES, ids=[f"{r.id}::{e.name}" for r, e in _CASES])
def test_rule_example(rule: Rule, example: Example) -> None:
    result = run_example(rule, example)
    assert result.passed, f"{result.test_id}: expected {example.expect}, {result.detail}"


def test_every_rule_has_both_kinds_of_example_and_lints_clean(rulebase: RuleBase) -> None:
    problems = {rule.id: lint_rule(rule) for rule in rulebase.rules}
    assert {k: v for k, v in problems.items() if v} == {}


def test_rule_base_is_substantial_and_covers_the_decision(rulebase: RuleBase) -> None:
    assert len(rulebase.rules) >= 10
    assert {r.data.category for r in rulebase.rules} <= set(CATEGORIES)
    assert any(r.data.effect.shape for r in rulebase.rules)
    assert any(r.data.effect.class_ for r in rulebase.rules)
    assert any(r.data.effect.fix_first for r in rulebase.rules)
    assert any(r.is_constraint for r in rulebase.rules)


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """
id = "TEST-001"
title = "A rule written for the loader tests"
category = "vram"
severity = "advice"
when = "workload.vram_need_gib > 24"
effect = {{ shape = {{ "single-larger-gpu" = 2 }} }}
rationale = "Long enough rationale text to satisfy the minimum length of forty characters."
action = "Buy a card with {{workload.vram_need_gib}} GiB."
{extra}
[[examples]]
name = "big"
expect = "fire"
facts = {{ "workload.vram_need_gib" = 40 }}

[[examples]]
name = "small"
expect = "no-fire"
facts = {{ "workload.vram_need_gib" = 8 }}
"""


def test_overlay_rule_loads_and_replaces(tmp_path: Path) -> None:
    _write(tmp_path, "TEST-001", GOOD.format(extra=""))
    base = load_rules([tmp_path])
    rule = base.get("TEST-001")
    assert fill(rule.data.action, {"workload.vram_need_gib": 40.0}) == "Buy a card with 40 GiB."
    assert len(base.rules) == len(_BUNDLED.rules) + 1


def test_misspelt_fact_fails_at_load_with_file_rule_and_suggestion(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "TEST-001",
        GOOD.format(extra="").replace("vram_need_gib > 24", "vram_ned_gib > 24"),
    )
    with pytest.raises(InputError) as caught:
        load_rule_file(path)
    error = caught.value
    assert error.file == str(path)
    assert error.field == "when"
    assert error.line == 6
    assert "TEST-001" in error.message and "workload.vram_ned_gib" in error.message
    assert error.hint and "workload.vram_need_gib" in error.hint


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('catgory = "vram"', "unknown key"),
        ('require = "sku.ecc == 3"', "compares a bool with a number"),
        ('aliases = ["TEST-001"]', "already used"),
    ],
)
def test_bad_rules_are_refused(tmp_path: Path, extra: str, message: str) -> None:
    _write(tmp_path, "TEST-001", GOOD.format(extra=extra))
    with pytest.raises(InputError, match=message):
        load_rules([tmp_path])


def test_unknown_placeholder_refused(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "TEST-001",
        GOOD.format(extra="").replace("{workload.vram_need_gib} GiB", "{workload.vram} GiB"),
    )
    with pytest.raises(InputError, match="placeholder"):
        load_rules([tmp_path])


def test_file_name_must_match_id(tmp_path: Path) -> None:
    _write(tmp_path, "TEST-002", GOOD.format(extra=""))
    with pytest.raises(InputError, match="differs from the file name"):
        load_rules([tmp_path])


def test_lint_refuses_rule_without_no_fire_example(tmp_path: Path) -> None:
    text = GOOD.format(extra="").split('[[examples]]\nname = "small"')[0]
    path = _write(tmp_path, "TEST-001", text)
    assert "needs an example that does not fire" in lint_rule(load_rule_file(path))


def test_lint_reports_a_failing_example(tmp_path: Path) -> None:
    text = GOOD.format(extra="").replace(
        '"workload.vram_need_gib" = 8', '"workload.vram_need_gib" = 80'
    )
    _write(tmp_path, "TEST-001", text)
    problems = lint_rules(load_rules(base=tmp_path))
    assert any("TEST-001::small" in p for p in problems)


def test_alias_resolves_to_renamed_rule(tmp_path: Path) -> None:
    _write(tmp_path, "TEST-001", GOOD.format(extra='aliases = ["OLD-001"]'))
    assert load_rules([tmp_path]).get("OLD-001").id == "TEST-001"


def test_misspelt_required_key_is_reported_as_a_misspelling(tmp_path: Path) -> None:
    _write(tmp_path, "TEST-001", GOOD.format(extra="").replace("title =", "titel ="))
    with pytest.raises(InputError) as caught:
        load_rules([tmp_path])
    assert "unknown key" in caught.value.message
    assert caught.value.hint and "'title'" in caught.value.hint
