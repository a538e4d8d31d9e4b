"""The rules folder a rule sits in is its kind: preference/, constraint/ or fix-first/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.engine.rules import _rule_files, load_rules, rule_kind
from gpuadvisor.errors import InputError
from gpuadvisor.resources import data_dir
from gpuadvisor.vocabulary import RULE_FOLDERS, RULE_KINDS, RuleKind

from .conftest import CliResult

RULE = """
id = "TEST-001"
title = "A rule written for the folder tests"
category = "vram"
severity = "advice"
when = "workload.vram_need_gib > 24"
{kind}
rationale = "Long enough rationale text to satisfy the minimum length of forty characters."
action = "Buy a larger card."

[[examples]]
name = "big"
expect = "fire"
facts = {{ "workload.vram_need_gib" = 40, "budget.max_usd" = 1 }}

[[examples]]
name = "small"
expect = "no-fire"
facts = {{ "workload.vram_need_gib" = 8 }}
"""

KIND_LINES: dict[RuleKind, str] = {
    "preference": 'effect = { shape = { "single-larger-gpu" = 2 } }',
    "constraint": 'require = "option.total_price_usd <= budget.max_usd"',
    "fix-first": "effect = { fix_first = true }",
}


def _write(folder: Path, kind: RuleKind, sub: str | None = None) -> Path:
    where = folder / sub if sub else folder
    where.mkdir(parents=True, exist_ok=True)
    path = where / "TEST-001.toml"
    path.write_text(RULE.format(kind=KIND_LINES[kind]), encoding="utf-8")
    return path


def test_every_bundled_rule_sits_in_its_kinds_folder() -> None:
    root = data_dir("rules")
    base = load_rules()
    for rule in base.rules:
        assert Path(rule.path).parent == root / RULE_FOLDERS[rule.kind], rule.id
    folders = {p.name for p in root.iterdir() if p.is_dir()}
    assert folders == set(RULE_FOLDERS.values())
    assert {rule.kind for rule in base.rules} == set(RULE_KINDS)


def test_the_readme_in_the_rules_folder_is_not_a_rule(tmp_path: Path) -> None:
    assert (data_dir("rules") / "README.md").is_file()
    _write(tmp_path, "preference", "preference")
    (tmp_path / "README.md").write_text("# not a rule\n", encoding="utf-8")
    (tmp_path / "preference" / "notes.md").write_text("id = 'X'\n", encoding="utf-8")
    assert [r.id for r in load_rules(base=tmp_path).rules] == ["TEST-001"]


@pytest.mark.parametrize("kind", RULE_KINDS)
def test_a_rule_loads_from_its_folder_or_directly_from_an_overlay(
    tmp_path: Path, kind: RuleKind
) -> None:
    _write(tmp_path / "in-folder", kind, RULE_FOLDERS[kind])
    _write(tmp_path / "flat", kind)
    for overlay in ("in-folder", "flat"):
        rule = load_rules([tmp_path / overlay]).get("TEST-001")
        assert rule.kind == kind == rule_kind(rule.data)


MISFILED = [(kind, folder) for kind in RULE_KINDS for folder in RULE_KINDS if folder != kind]


@pytest.mark.parametrize(("kind", "folder"), MISFILED, ids=[f"{k}-in-{f}" for k, f in MISFILED])
@pytest.mark.parametrize("as_overlay", [False, True], ids=["base", "overlay"])
def test_a_rule_in_another_kinds_folder_is_refused(
    tmp_path: Path, kind: RuleKind, folder: RuleKind, as_overlay: bool
) -> None:
    path = _write(tmp_path, kind, RULE_FOLDERS[folder])
    with pytest.raises(InputError) as caught:
        load_rules([tmp_path]) if as_overlay else load_rules(base=tmp_path)
    error = caught.value
    assert error.file == str(path)
    decisive = folder if kind == "preference" else kind
    assert error.field == {"constraint": "require", "fix-first": "effect.fix_first"}[decisive]
    assert f"is a {kind} rule" in error.message
    assert f"sits in {RULE_FOLDERS[folder]}/" in error.message
    assert f"belongs in {RULE_FOLDERS[kind]}/" in error.message
    if kind != "preference":
        assert error.line == 7  # the line of `require` or of `effect`


@pytest.mark.parametrize("sub", ["shape", "measured", "preference/more", "Constraint"])
def test_an_overlay_subfolder_that_is_not_a_kind_is_refused(tmp_path: Path, sub: str) -> None:
    path = _write(tmp_path, "preference", sub)
    with pytest.raises(InputError, match="not a rule kind") as caught:
        load_rules([tmp_path])
    assert caught.value.file == str(path)
    assert f"{sub}/" in caught.value.message
    assert "directly in the overlay folder" in caught.value.message


def test_the_bundled_layout_allows_no_rule_outside_a_kind_folder(tmp_path: Path) -> None:
    _write(tmp_path, "preference", "preference")
    assert [kind for _, kind in _rule_files(tmp_path, bundled=True)] == ["preference"]
    (tmp_path / "TEST-002.toml").write_text("", encoding="utf-8")
    with pytest.raises(
        InputError, match="directly in the bundled rules folder; rule files sit in preference/"
    ):
        _rule_files(tmp_path, bundled=True)


def test_rules_lint_reports_a_misfiled_rule(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    path = _write(tmp_path, "constraint", "preference")
    result = cli("rules", "lint", str(tmp_path))
    assert result.exit_code == 2, result
    assert "Traceback" not in result.stderr
    assert f"{path}:7: require:" in result.stderr
    assert "belongs in constraint/" in result.stderr
    unknown = tmp_path / "other"
    _write(unknown, "preference", "class")
    result = cli("rules", "lint", str(unknown))
    assert result.exit_code == 2 and "class/, which is not a rule kind" in result.stderr
