"""Every command line of the README's Usage tour (and its Questionnaire and Sizing) runs
as written, on the files the repository ships (issue #34: no placeholder file names).

The lines are read from README.md itself: the ```sh blocks between the ``## Usage tour``
heading and the next ``##`` heading. A README change to a line that does not run fails
here. ``# ...`` comments and comment-only lines are dropped; a trailing ``\\`` continues
a line. Lines that are only ``gpuadvisor ...`` run in process through
:func:`gpuadvisor.cli.main`; lines with shell syntax (pipes, redirections, other
programs) run in bash, with ``gpuadvisor`` being ``python -m gpuadvisor`` of this
checkout. All run in order in one temporary folder that holds a copy of the bundled
folders the tour names (examples/, rules/), as a fresh checkout does, and nothing else.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import REPO, CliResult

Cli = Callable[..., CliResult]

README = REPO / "README.md"

#: A person's answers to ``gpuadvisor ask``: no title, no requester, the three required
#: answers, then Enter (the default) for every further question.
ANSWERS = "\n\ntraining\nthroughput\n20\n" + "\n" * 200

#: A pipe (with spaces: ``a|b`` inside a word is the README's notation), a redirection,
#: a list, a substitution.
SHELL_SYNTAX = re.compile(r"\s\|\s|[;&<>`$]")


# -- reading the README --------------------------------------------------------------


def tour_blocks(text: str) -> list[str]:
    """The ```sh blocks of the ``## Usage tour`` section (its ``###`` parts included)."""
    start = re.search(r"^## Usage tour\s*$", text, re.M)
    assert start, "README.md has no '## Usage tour' section"
    end = re.search(r"^## ", text[start.end() :], re.M)
    section = text[start.end() : start.end() + end.start()] if end else text[start.end() :]
    return re.findall(r"^```sh\n(.*?)^```", section, re.M | re.S)


def strip_comment(line: str) -> str:
    """``line`` without a shell comment: a ``#`` at the start of a word, outside quotes."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def logical_lines(block: str) -> Iterator[str]:
    pending = ""
    for raw in block.splitlines():
        line = strip_comment(raw)
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        line = (pending + line.strip()).strip()
        pending = ""
        if line:
            yield line
    assert not pending, f"a continued line never ends: {pending!r}"


@dataclass(frozen=True)
class Run:
    line: str  # as the README writes it, comments stripped
    args: tuple[str, ...] | None  # a gpuadvisor command run in process, else None
    shell: str | None  # a shell line, run in bash

    def label(self) -> str:
        return " ".join(("gpuadvisor", *self.args)) if self.args is not None else str(self.shell)


def tour_runs(text: str) -> list[Run]:
    runs: list[Run] = []
    for block in tour_blocks(text):
        for line in logical_lines(block):
            if line.startswith("gpuadvisor ") and not SHELL_SYNTAX.search(line):
                runs.append(Run(line, tuple(shlex.split(line)[1:]), None))
            else:
                runs.append(Run(line, None, line))
    return runs


def test_the_tour_is_read_from_the_readme() -> None:
    """The reader finds every block, and the tour is runnable as written: no reader's
    notation (``[DIR]``, ``a|b``, ``FILE``, ``...``) a newcomer would have to translate."""
    text = README.read_text(encoding="utf-8")
    assert len(tour_blocks(text)) >= 4, "expected the tour, evidence, data, ask and size blocks"
    runs = tour_runs(text)
    labels = [run.label() for run in runs]
    assert len(labels) >= 25
    assert {
        "gpuadvisor --version",
        "gpuadvisor schema decision",
        "gpuadvisor rules lint rules",
        "gpuadvisor size --list-models",
    } <= set(labels)
    assert not [label for label in labels if "#" in label or label.endswith("\\")], labels
    assert any(label.startswith("yes '' | gpuadvisor ask") for label in labels)
    notation = re.compile(
        r"\[[A-Z_]+\]|(?<![\s'])\|(?!\s)|\.\.\.|\b(?:FILE|DIR|NAME|PROFILE|SKU|URL|PATH)\b"
    )
    assert not [r.line for r in runs if r.args is not None and notation.search(r.line)]
    # Every file a gpuadvisor line reads is in the repository (or made by an earlier line).
    made: set[str] = set()
    for run in runs:
        args = run.args or ()
        for i, arg in enumerate(args):
            if arg in ("-o", "--output", "--profile-out"):
                made.add(args[i + 1])
            elif arg.endswith((".toml", ".txt", ".json", ".log")) and (
                i == 0 or args[i - 1] not in ("-o", "--output", "--profile-out")
            ):
                assert arg in made or (REPO / arg).is_file(), f"{run.line}: {arg} is not shipped"


def test_the_tour_covers_every_command() -> None:
    """Every command and subcommand the program has appears in a line of the README
    (the Usage tour's sh blocks, or the web page's bash block for the long-running
    ``serve``)."""
    from gpuadvisor.cli.app import whole_command

    text = README.read_text(encoding="utf-8")
    lines = [run.line for run in tour_runs(text)]
    lines += re.findall(r"^\S*gpuadvisor [^\n]*$", text, re.M)
    missing = []
    root = whole_command()
    for name, command in root.commands.items():
        subs = getattr(command, "commands", None) or {"": None}
        for sub in subs:
            words = f"gpuadvisor {name} {sub}".strip()
            if not any(re.search(rf"(^|[\s/]){re.escape(words)}(\s|$)", line) for line in lines):
                missing.append(words)
    assert not missing, f"README lines never run these commands: {missing}"


def test_reading_the_notation() -> None:
    sample = (
        "gpuadvisor a x   # a comment\n"
        "# a comment line\n"
        "gpuadvisor b rules \\\n    --flag '#not a comment'\n"
        "printf 'q' > f.txt\n"
    )
    runs = tour_runs(f"## Usage tour\n\n```sh\n{sample}```\n\n## Next\n")
    assert [run.label() for run in runs] == [
        "gpuadvisor a x",
        "gpuadvisor b rules --flag #not a comment",
        "printf 'q' > f.txt",
    ]


# -- running it ----------------------------------------------------------------------


def nvml_works() -> bool:
    """Whether NVML starts here (a host with an NVIDIA driver)."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return False
    pynvml.nvmlShutdown()
    return True


def prepare(folder: Path) -> None:
    """The folder as a fresh checkout has it: the bundled folders the tour reads."""
    for name in ("examples", "rules"):
        shutil.copytree(REPO / name, folder / name)
    bin_dir = folder / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "gpuadvisor"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gpuadvisor "$@"\n', encoding="utf-8")
    shim.chmod(0o755)


def run_shell(line: str, folder: Path) -> CliResult:
    env = dict(os.environ)
    env["PATH"] = f"{folder / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        ["bash", "-c", line],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


def outputs(args: tuple[str, ...]) -> list[str]:
    return [args[i + 1] for i, arg in enumerate(args[:-1]) if arg in ("-o", "--output")]


@pytest.mark.skipif(shutil.which("bash") is None, reason="the tour's shell lines need bash")
def test_every_tour_line_runs(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepare(tmp_path)
    monkeypatch.chdir(tmp_path)
    probe_here = nvml_works()
    if probe_here:  # a GPU host: the 120 s measurement runs in fake time
        from gpuadvisor.probe import sampler
        from tests.nvml_standin import FakeTime
        from tests.probe_support import fake_clock

        monkeypatch.setattr(sampler, "Clock", lambda: fake_clock(FakeTime()))

    failures: list[str] = []
    runs = tour_runs(README.read_text(encoding="utf-8"))
    for run in runs:
        expected, fragments = 0, ()
        if run.args is not None and run.args[:1] == ("probe",) and not probe_here:
            # No NVIDIA driver here: the documented refusal, naming the offline route.
            expected, fragments = 2, ("cannot probe", "NVML", "gpuadvisor import")
        written = outputs(run.args or ()) if expected == 0 else []
        for name in written:
            (tmp_path / name).unlink(missing_ok=True)
        if run.args is not None:
            result = cli(*run.args, stdin=ANSWERS)
        else:
            assert run.shell is not None
            result = run_shell(run.shell, tmp_path)
        problems = [f"stderr lacks {text!r}" for text in fragments if text not in result.stderr]
        if result.exit_code != expected:
            problems.append(f"exit {result.exit_code}, expected {expected}")
        if "Traceback" in result.stderr:
            problems.append("a traceback")
        problems += [f"{name} not written" for name in written if not (tmp_path / name).is_file()]
        if problems:
            failures.append(f"{run.label()}: {'; '.join(problems)}\n{result.stderr[-2000:]}")
    assert not failures, "README tour lines that do not run:\n\n" + "\n\n".join(failures)
    # What the tour builds is there and is what it says it is.
    assert (tmp_path / "report.pdf").read_bytes().startswith(b"%PDF-")
    assert (tmp_path / "report.html").read_text(encoding="utf-8").lstrip().startswith("<!")
    assert '"gpuadvisor/host/v1"' in (tmp_path / "host.json").read_text(encoding="utf-8")
    assert 'kind = "training"' in (tmp_path / "sweep.toml").read_text(encoding="utf-8")
