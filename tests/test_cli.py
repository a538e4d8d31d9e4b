"""The command line: exit codes, messages, and that bad input never shows a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.engine.rules import RuleBase

from .conftest import CliResult

Cli = Callable[..., CliResult]

PROFILE = """schema = "gpuadvisor/profile/v1"
[meta]
title = "CLI test"
[workload]
kind = "inference"
objective = "latency"
vram_need_gib = 20
"""


@pytest.fixture()
def profile(tmp_path: Path) -> Path:
    path = tmp_path / "profile.toml"
    path.write_text(PROFILE, encoding="utf-8")
    return path


def assert_clean_error(result: CliResult, *fragments: str) -> None:
    assert result.exit_code == 2, result
    assert "Traceback" not in result.stderr + result.stdout
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_advise_markdown_to_stdout(cli: Cli, profile: Path) -> None:
    result = cli("advise", str(profile))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("# GPU purchase recommendation: CLI test")
    assert "## Summary" in result.stdout and "## Inputs and provenance" in result.stdout


def test_advise_json_is_decision_v1(cli: Cli, profile: Path) -> None:
    result = cli("advise", str(profile), "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == "gpuadvisor/decision/v1"
    for key in (
        "recommendation",
        "fix_first",
        "findings",
        "picks",
        "rejected",
        "sensitivity",
        "inputs",
        "provenance",
    ):
        assert key in data
    assert set(data["recommendation"]) >= {"shape", "class", "gpu_count", "headline"}
    for finding in data["findings"]:
        assert set(finding) >= {"rule", "category", "severity", "title", "evidence", "rationale"}
    for pick in data["picks"]:
        assert set(pick) >= {"sku", "name", "count", "price_usd", "why"}


def test_advise_output_file_is_written_atomically(cli: Cli, profile: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    result = cli("advise", str(profile), "-o", str(out))
    assert result.exit_code == 0
    assert out.read_text().startswith("# GPU purchase recommendation")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_bad_profile_keeps_existing_output(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(PROFILE.replace("vram_need_gib", "vram_needed_gib"))
    out = tmp_path / "report.md"
    out.write_text("previous report")
    result = cli("advise", str(bad), "-o", str(out))
    assert_clean_error(
        result, "bad.toml:7: workload.vram_needed_gib: unknown key", "did you mean 'vram_need_gib'"
    )
    assert out.read_text() == "previous report"


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        ("", ["file is empty"]),
        ("[workload\n", ["invalid TOML", ":1"]),
        (PROFILE.replace('"latency"', '"fast"'), ["workload.objective", "'fast'"]),
        (
            PROFILE.replace("vram_need_gib = 20", "vram_need_gib = -1"),
            ["workload.vram_need_gib", "greater than or equal to 0.01"],
        ),
        (PROFILE.replace("profile/v1", "profile/v2"), ["unsupported schema"]),
        (PROFILE + "[budget]\nmax_usd = nan\n", ["budget.max_usd"]),
    ],
)
def test_bad_profiles_exit_2_with_location(
    cli: Cli, tmp_path: Path, content: str, fragments: list[str]
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(content)
    assert_clean_error(cli("advise", str(path)), str(path), *fragments)


def test_missing_profile_file(cli: Cli, tmp_path: Path) -> None:
    assert_clean_error(cli("advise", str(tmp_path / "nope.toml")), "nope.toml", "not found")


def test_unwritable_output(cli: Cli, profile: Path, tmp_path: Path) -> None:
    assert_clean_error(
        cli("advise", str(profile), "-o", str(tmp_path / "missing" / "r.md")), "does not exist"
    )
    assert_clean_error(cli("advise", str(profile), "-o", str(tmp_path)), "is a directory")


def test_unknown_format_is_usage_error(cli: Cli, profile: Path) -> None:
    result = cli("advise", str(profile), "--format", "docx")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_init_template_is_a_valid_profile(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "template.toml"
    assert cli("init", "-o", str(out)).exit_code == 0
    text = out.read_text()
    assert "# " in text and "vram_need_gib" in text and "REQUIRED" in text
    assert cli("advise", str(out)).exit_code == 0


def test_init_examples_listed_and_valid(cli: Cli, tmp_path: Path) -> None:
    listing = cli("init", "--list")
    names = [line.split()[0] for line in listing.stdout.splitlines()]
    assert len(names) >= 3
    for name in names:
        out = tmp_path / f"{name}.toml"
        assert cli("init", "--example", name, "-o", str(out)).exit_code == 0
        assert cli("advise", str(out), "--no-sensitivity").exit_code == 0, name


def test_init_unknown_example(cli: Cli) -> None:
    assert_clean_error(cli("init", "--example", "nope"), "no worked example")


@pytest.mark.parametrize("name", ["profile", "decision"])
def test_schema(cli: Cli, name: str) -> None:
    result = cli("schema", name)
    assert result.exit_code == 0
    assert "properties" in json.loads(result.stdout)


def test_rules_commands(cli: Cli) -> None:
    listing = cli("rules", "list")
    assert listing.exit_code == 0 and "FIT-001" in listing.stdout
    explained = cli("rules", "explain", "VRAM-001")
    assert explained.exit_code == 0
    for heading in ("## Why it matters", "## What to do", "## Examples"):
        assert heading in explained.stdout
    assert_clean_error(cli("rules", "explain", "VRAM-01"), "no rule", "VRAM-001")
    lint = cli("rules", "lint")
    assert lint.exit_code == 0, lint.stderr
    tested = cli("rules", "test")
    assert tested.exit_code == 0 and ", 0 failed" in tested.stdout
    assert "workload.vram_need_gib" in cli("rules", "facts").stdout


def test_rules_explain_prints_the_decision_packages_text(cli: Cli, rulebase: RuleBase) -> None:
    """The phrasing lives in gpuadvisor.decision.explain; the command only prints it."""
    from gpuadvisor.decision.explain import explain_rule

    for rule in rulebase.rules:
        text = explain_rule(rule)
        assert text.startswith(f"{rule.data.id}: {rule.data.title}\n")
        assert cli("rules", "explain", rule.data.id).stdout == text + "\n"


def test_rules_lint_refuses_bad_folder(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "X-001.toml").write_text('id = "X-001"\ntitle = "short"\n')
    assert_clean_error(cli("rules", "lint", str(tmp_path)), "X-001")


def test_rules_overlay_with_typo_is_refused(cli: Cli, profile: Path, tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[1] / "rules" / "preference" / "LAT-001.toml"
    text = source.read_text().replace("workload.objective ==", "workload.objectve ==")
    (tmp_path / "LAT-001.toml").write_text(text)
    assert_clean_error(
        cli("advise", str(profile), "--rules", str(tmp_path)),
        "LAT-001.toml:",
        "when",
        "unknown fact 'workload.objectve'",
        "workload.objective",
    )


def test_catalog_commands(cli: Cli) -> None:
    listed = cli("catalog", "list", "--format", "json")
    assert listed.exit_code == 0
    skus = json.loads(listed.stdout)
    assert skus and {"id", "name", "segment", "vram_gib", "price_usd", "sources"} <= set(skus[0])
    first = skus[0]["id"]
    shown = cli("catalog", "show", first)
    assert shown.exit_code == 0 and first in shown.stdout
    assert_clean_error(cli("catalog", "show", "no-such-card"), "no SKU")
    assert_clean_error(cli("catalog", "list", "--segment", "gaming"), "unknown segment")
    ecc = json.loads(cli("catalog", "list", "--ecc", "--format", "json").stdout)
    assert all(s["ecc"] for s in ecc)
    assert cli("catalog", "lint").exit_code == 0


def test_no_arguments_shows_help(cli: Cli) -> None:
    result = cli()
    assert "Usage" in result.stdout + result.stderr


def _run_click(command: object, args: list[str]) -> tuple[str, str, object]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    code: object = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            command.main(args=args, prog_name="gpuadvisor")  # type: ignore[attr-defined]
        except SystemExit as exc:
            code = exc.code
        except Exception as exc:  # what main() would map to an exit code
            code = repr(exc)
    return out.getvalue(), err.getvalue(), code


@pytest.mark.parametrize("suffix", [["--help"], ["--no-such-option"], ["a", "b", "c", "d"]])
def test_one_command_apps_behave_as_the_whole_application(suffix: list[str]) -> None:
    """main() builds only the command it runs; help, parsing and errors are unchanged."""
    import typer

    from gpuadvisor.cli import app as cli_module

    whole = cli_module.whole_command()
    names = [
        info.name or typer.main.get_command_name(info.callback.__name__ if info.callback else "")
        for info in cli_module.app.registered_commands
    ]
    assert set(names) <= set(whole.commands)  # type: ignore[attr-defined]
    assert "advise" in names and len(names) > 5
    for name in names:
        args = [name, *suffix]
        assert _run_click(cli_module._command_for(args), args) == _run_click(whole, args), args
    # Anything but a top-level command gets the whole application.
    for args in (["--help"], ["rules", "list"], ["advis"], []):
        assert cli_module._command_for(args).name == whole.name
        assert set(cli_module._command_for(args).commands) == set(whole.commands)  # type: ignore[attr-defined]
