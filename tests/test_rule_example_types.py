"""A rule example whose fact value has the wrong type is a clear input error naming the
rule file and the example (exit 2), not an internal error when the example runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import REPO, CliResult


def _overlay(tmp_path: Path, old: str, new: str) -> Path:
    folder = tmp_path / "org-rules" / "constraint"
    folder.mkdir(parents=True)
    text = (REPO / "rules" / "constraint" / "FIT-004.toml").read_text(encoding="utf-8")
    text = text.replace('id = "FIT-004"', 'id = "ORG-901"').replace(old, new, 1)
    (folder / "ORG-901.toml").write_text(text, encoding="utf-8")
    return folder.parent


@pytest.mark.parametrize("command", [("rules", "test", "--rules"), ("rules", "lint")])
def test_a_string_for_a_number_fact_names_the_file_and_the_example(
    tmp_path: Path, cli: Callable[..., CliResult], command: tuple[str, ...]
) -> None:
    rules = _overlay(
        tmp_path, '"option.total_price_usd" = 6800 }', '"option.total_price_usd" = "unknown" }'
    )
    result = cli(*command, str(rules))
    assert result.exit_code == 2
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "ORG-901.toml" in result.stderr and "examples.over-budget" in result.stderr
    assert (
        "example 'over-budget' gives 'option.total_price_usd' the str 'unknown'; it is a "
        "number fact"
    ) in result.stderr


def test_a_value_outside_a_string_facts_choices_is_refused(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    rules = _overlay(
        tmp_path,
        '"option.total_price_usd" = 6800 }',
        '"option.total_price_usd" = 6800, "workload.kind" = "gaming" }',
    )
    result = cli("rules", "test", "--rules", str(rules))
    assert result.exit_code == 2
    assert "gives 'workload.kind' 'gaming', not one of its values" in result.stderr
