"""Error messages that say everything, in the file's own spelling (issue #16, item 6).

Every problem of a file is listed (up to a bound), each with its line and field; a
number given as text says the type and unit expected and how to write it; values are
spelt as TOML spells them; rule ids are found in any case, with suggestions; ``init``
does not replace a file without ``--force``; help names what to type (``FILE...``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.inputs.validation import MAX_PROBLEMS, toml_spelling

from .conftest import CliResult
from .test_ask import TRAINING_ANSWERS, lines

Cli = Callable[..., CliResult]

BASE = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "training"
objective = "throughput"
vram_need_gib = 20
"""


def _advise(cli: Cli, tmp_path: Path, text: str) -> CliResult:
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    return cli("advise", str(path))


def test_every_problem_is_listed_with_its_own_line(cli: Cli, tmp_path: Path) -> None:
    text = BASE.replace("vram_need_gib = 20", 'vram_need_gib = "24GB"') + (
        "[requirements]\necc = true\n[platform]\ngpu_count_max = 0\n"
    )
    result = _advise(cli, tmp_path, text)
    assert result.exit_code == 2
    assert "more problem" not in result.stderr
    path = tmp_path / "p.toml"
    for line, field in (
        (5, "workload.vram_need_gib"),
        (7, "requirements.ecc"),
        (9, "platform.gpu_count_max"),
    ):
        assert f"{path}:{line}: {field}: " in result.stderr, result.stderr
    assert "(3 problems)" in result.stderr


def test_problems_over_the_bound_are_counted(cli: Cli, tmp_path: Path) -> None:
    apps = ", ".join(str(n) for n in range(MAX_PROBLEMS + 5))  # each one not text
    result = _advise(cli, tmp_path, BASE + f"[requirements]\nisv_apps = [{apps}]\n")
    assert result.exit_code == 2
    listed = re.findall(r"requirements\.isv_apps\.\d+: ", result.stderr)
    assert len(listed) == MAX_PROBLEMS
    assert f"... and 5 more problems ({MAX_PROBLEMS + 5} in all" in result.stderr


@pytest.mark.parametrize(
    ("value", "message", "hint"),
    [
        (
            '"24GB"',
            "a valid number of GiB, got the text '24GB'",
            "vram_need_gib = 22.35 (24 GB = 22.35 GiB)",
        ),
        (
            '"20"',
            "a valid number of GiB, got the text '20'",
            "vram_need_gib = 20 (GiB), without quotes",
        ),
        ('"80 GiB"', "a valid number of GiB", "vram_need_gib = 80, without quotes or unit"),
        ("true", "a valid number of GiB, got true", "not numbers in a profile"),
        ("-1", "greater than or equal to 0.01 GiB, got -1", None),
    ],
)
def test_a_number_says_its_type_and_unit(
    cli: Cli, tmp_path: Path, value: str, message: str, hint: str | None
) -> None:
    result = _advise(cli, tmp_path, BASE.replace("= 20", f"= {value}"))
    assert result.exit_code == 2
    assert message in result.stderr, result.stderr
    if hint is not None:
        assert f"hint: write {hint}" in result.stderr or hint in result.stderr, result.stderr


def test_a_whole_number_given_as_text(cli: Cli, tmp_path: Path) -> None:
    result = _advise(
        cli, tmp_path, BASE + '[platform]\npsu_headroom_w = "800W"\ngpu_count_max = "2"\n'
    )
    assert "platform.psu_headroom_w: Input should be a valid number of W, got the text '800W'" in (
        result.stderr
    )
    assert "hint: write psu_headroom_w = 800 (W), without quotes or unit" in result.stderr
    assert (
        "platform.gpu_count_max: Input should be a valid integer (a whole number)" in result.stderr
    )


def test_values_are_spelt_as_toml_spells_them(cli: Cli, tmp_path: Path) -> None:
    result = _advise(cli, tmp_path, BASE + "[requirements]\necc = true\n")
    assert result.exit_code == 2
    assert "got true" in result.stderr and "True" not in result.stderr
    assert "hint: the choices are text in quotes: ecc = 'required'" in result.stderr
    assert [
        toml_spelling(v) for v in (True, False, None, 3, 2.5, "a", 'say "hi"', [True, "x"])
    ] == [
        "true",
        "false",
        "null",
        "3",
        "2.5",
        "'a'",
        "'say \"hi\"'",
        "[true, 'x']",
    ]
    assert toml_spelling("it's") == '"it\'s"' and toml_spelling("a\nb") == '"a\\nb"'


def test_a_starting_file_of_ask_is_explained_the_same_way(cli: Cli, tmp_path: Path) -> None:
    start = tmp_path / "start.toml"
    start.write_text(BASE + "[requirements]\necc = true\n", encoding="utf-8")
    result = cli("ask", "--from", str(start), stdin="no\n" + "\n" * 60)
    assert result.exit_code == 0, result.stderr
    assert (
        "requirements.ecc: not accepted (Input should be 'required', 'preferred' or 'no', got true"
        in (result.stderr)
    )
    assert "True" not in result.stderr


def test_a_suggestion_is_not_followed_by_a_stray_full_stop(cli: Cli) -> None:
    answers = list(TRAINING_ANSWERS)
    answers[2:3] = ["inferenc", "training"]
    result = cli("ask", stdin=lines(answers))
    assert result.exit_code == 0, result.stderr
    assert "did you mean 'inference'? Please answer again." in result.stderr
    assert "?." not in result.stderr


# -- rules explain ---------------------------------------------------------------------


@pytest.mark.parametrize("typed", ["vram-001", "VRAM-001", "Vram-001", " vram-001 "])
def test_rules_explain_takes_an_id_in_any_case(cli: Cli, typed: str) -> None:
    result = cli("rules", "explain", typed)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("VRAM-001: ")


@pytest.mark.parametrize("typed", ["vrm-001", "VRAM-01", "vram001"])
def test_rules_explain_suggests_the_closest_id(cli: Cli, typed: str) -> None:
    result = cli("rules", "explain", typed)
    assert result.exit_code == 2
    assert f"no rule '{typed}'" in result.stderr
    assert "did you mean 'VRAM-001'?" in result.stderr
    assert "gpuadvisor rules list" in result.stderr


# -- init does not replace a file ------------------------------------------------------


def test_init_refuses_to_replace_a_file_without_force(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "profile.toml"
    out.write_text("# my edits\n", encoding="utf-8")
    for args in (
        ["init", "-o", str(out)],
        ["init", "--example", "hyperparameter-sweep", "-o", str(out)],
    ):
        result = cli(*args)
        assert result.exit_code == 2
        assert "exists already" in result.stderr and "--force" in result.stderr
        assert out.read_text(encoding="utf-8") == "# my edits\n"
    result = cli("init", "-o", str(out), "--force")
    assert result.exit_code == 0, result.stderr
    assert out.read_text(encoding="utf-8").startswith("# gpuadvisor workload profile")


def test_init_still_writes_a_new_file(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "new.toml"
    assert cli("init", "-o", str(out)).exit_code == 0
    assert out.is_file()


# -- help names what to type -----------------------------------------------------------

COMMANDS = [
    ["init"],
    ["ask"],
    ["advise"],
    ["probe"],
    ["import"],
    ["schema"],
    ["version"],
    ["rules", "list"],
    ["rules", "explain"],
    ["rules", "lint"],
    ["rules", "test"],
    ["rules", "facts"],
    ["catalog", "list"],
    ["catalog", "show"],
    ["catalog", "lint"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_shows_no_python_types_for_files(cli: Cli, command: list[str]) -> None:
    result = cli(*command, "--help")
    assert result.exit_code == 0, result.stderr
    assert "list[" not in result.stdout and "<path>" not in result.stdout, result.stdout


def test_import_help_shows_file_dots(cli: Cli) -> None:
    result = cli("import", "--help")
    assert "Usage: gpuadvisor import [OPTIONS] FILE..." in result.stdout
    assert re.search(r"^\s+FILE\.\.\.\s+Captured outputs", result.stdout, re.M), result.stdout
    advise = cli("advise", "--help").stdout
    assert "Usage: gpuadvisor advise [OPTIONS] PROFILE" in advise
    assert "--evidence FILE" in advise and "-o, --output FILE" in advise
