"""The rough edges a newcomer hit (issue #34): each pinned on the command line as typed."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor import __version__

from .conftest import REPO, CliResult

Cli = Callable[..., CliResult]

EXAMPLE = REPO / "examples" / "llm-latency-endpoint.toml"
PARTIAL = '[workload]\nkind = "training"\nobjective = "throughput"\nvram_need_gib = 20\n'
ANSWERS = "\n" * 200


def test_version_option(cli: Cli) -> None:
    result = cli("--version")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == f"gpuadvisor {__version__}"


def test_ask_does_not_overwrite_a_profile_without_force(cli: Cli, tmp_path: Path) -> None:
    start = tmp_path / "partial.toml"
    start.write_text(PARTIAL, encoding="utf-8")
    target = tmp_path / "mine.toml"
    target.write_text("# my edited answers\n", encoding="utf-8")

    refused = cli("ask", "--from", str(start), "-o", str(target), stdin=ANSWERS)
    assert refused.exit_code == 2
    assert "exists already" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert target.read_text(encoding="utf-8") == "# my edited answers\n"
    # Refused before the first question: nobody answers the questionnaire to be told then.
    assert "?" not in refused.stderr.split("error:")[0]

    other = tmp_path / "other.toml"
    other.write_text("# keep\n", encoding="utf-8")
    via_profile_out = cli(
        "ask", "--from", str(start), "--advise", "--profile-out", str(other), stdin=ANSWERS
    )
    assert via_profile_out.exit_code == 2 and "--profile-out" in via_profile_out.stderr
    assert other.read_text(encoding="utf-8") == "# keep\n"

    forced = cli("ask", "--from", str(start), "-o", str(target), "--force", stdin=ANSWERS)
    assert forced.exit_code == 0, forced.stderr
    assert 'kind = "training"' in target.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "shown", "not_shown"),
    [
        (("size", "--help"), "--card SKU", "<list[str]>"),
        (("schema", "--help"), "DOCUMENT", "{name}"),
    ],
)
def test_help_shows_what_to_type(
    cli: Cli, args: tuple[str, ...], shown: str, not_shown: str
) -> None:
    result = cli(*args)
    assert result.exit_code == 0
    assert shown in result.stdout and not_shown not in result.stdout


def test_no_help_names_a_python_type_or_a_missing_readme_section(cli: Cli) -> None:
    from gpuadvisor.cli.app import whole_command

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    headings = {line.lstrip("#").strip() for line in readme.splitlines() if line.startswith("#")}

    def walk(command: object, path: tuple[str, ...]) -> None:
        subcommands = getattr(command, "commands", {})
        for name, sub in subcommands.items():
            walk(sub, (*path, name))
        if subcommands:
            return
        text = cli(*path, "--help").stdout
        assert "<list[" not in text and "{name}" not in text, path
        for section in re.findall(r'see README, "([^"]+)"', text):
            assert section in headings, f"{' '.join(path)} --help names README {section!r}"
        for doc in re.findall(r"see (docs/[\w.-]+\.md)", text):
            assert (REPO / doc).is_file(), f"{' '.join(path)} --help names {doc}"

    walk(whole_command(), ())


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (
            ("advise", str(EXAMPLE), "--evidence", "nope.txt"),
            "nope.txt: --evidence: file not found",
        ),
        (("advise", "nope.toml"), "nope.toml: PROFILE: file not found"),
        (("import", "nope.txt"), "nope.txt: FILE: file not found"),
        (("ask", "--from", "nope.toml"), "nope.toml: --from: file not found"),
    ],
)
def test_a_missing_file_names_the_option_that_named_it(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], named: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli(*args, stdin="")
    assert result.exit_code == 2
    assert named in result.stderr, result.stderr


def test_advise_to_a_pipe_or_file_is_exact_markdown(cli: Cli, tmp_path: Path) -> None:
    piped = cli("advise", str(EXAMPLE), "--no-sensitivity")
    out = tmp_path / "r.md"
    written = cli("advise", str(EXAMPLE), "--no-sensitivity", "-o", str(out))
    assert piped.exit_code == written.exit_code == 0
    assert piped.stdout == out.read_text(encoding="utf-8")
    assert r"\$" in piped.stdout  # Markdown escapes what would be markup


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_advise_to_a_terminal_is_readable_text() -> None:
    pexpect = pytest.importorskip("pexpect")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"PYTHONPATH": str(REPO), "NO_COLOR": "1", "TERM": "xterm", "COLUMNS": "100"})
    child = pexpect.spawn(
        sys.executable,
        ["-m", "gpuadvisor", "advise", str(EXAMPLE), "--no-sensitivity"],
        env=env,
        encoding="utf-8",
        timeout=120,
        dimensions=(50, 100),
    )
    child.expect(pexpect.EOF)
    text = child.before
    child.close()
    assert child.exitstatus == 0, text[-2000:]
    for escaped in (r"\$", r"\_", r"\#", r"\*"):
        assert escaped not in text, escaped
    assert "$4,500" in text  # the price, readable
    assert "workload.vram_need_gib" in text  # a fact name, without escapes
    assert "GPU purchase recommendation" in text and "## " not in text
