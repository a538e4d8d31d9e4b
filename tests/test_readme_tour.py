"""Every command line of the README's Usage tour (and its Questionnaire) runs as written.

The lines are read from README.md itself: the ```sh blocks between the ``## Usage tour``
heading and the next ``##`` heading. A README change to a line that does not run fails
here. Notation the README uses for a reader, not for a shell, is expanded:

- ``# ...`` comments and comment-only lines are dropped; a trailing ``\\`` continues a line;
- ``a|b|c`` inside a word (no spaces) is one run per alternative;
- ``[NAME]`` is optional: one run without it and one with NAME filled in (PLACEHOLDERS).

Lines that are only ``gpuadvisor ...`` run in process through :func:`gpuadvisor.cli.main`;
lines with shell syntax (pipes, redirections, other programs) run in bash, with
``gpuadvisor`` being ``python -m gpuadvisor`` of this checkout. All run in order in one
temporary folder that holds the files the tour names (captures from
examples/evidence and tests/fixtures/evidence, a template overlay, examples/).
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

from .conftest import FIXTURES, REPO, CliResult

Cli = Callable[..., CliResult]

README = REPO / "README.md"

#: What the tour's placeholders stand for.
PLACEHOLDERS = {"DIR": str(REPO / "rules")}

#: The files the tour names, and which capture stands in for each (one two-GPU host:
#: nvidia-smi -q, topo -m, a kernel log with an Xid on one of its GPUs, iostat -x).
CAPTURES = {
    "nvidia-smi-q.txt": FIXTURES / "evidence" / "two-gpu-q.txt",
    "topo.txt": FIXTURES / "evidence" / "two-gpu-topo-nvlink-nic.txt",
    "dmesg.log": FIXTURES / "evidence" / "seed-dmesg-T-xid31-bus.log",
    "iostat.txt": FIXTURES / "evidence" / "iostat-3-reports.txt",
}

#: ``--template ./acme-style``: an organisation overlay that restyles the PDF.
ACME_STYLE = {
    "report.typ.j2": (
        '{% extends "bundled/report.typ.j2" %}'
        '{% block style %}#let accent = rgb("#b00020"){% endblock %}'
    ),
}

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


def expand(words: list[str]) -> list[list[str]]:
    """Alternatives (``a|b``) and optional placeholders (``[NAME]``) made into runs."""
    runs: list[list[str]] = [[]]
    for word in words:
        optional = re.fullmatch(r"\[([A-Z_]+)\]", word)
        if optional:
            name = optional.group(1)
            assert name in PLACEHOLDERS, f"the tour uses [{name}]; say in PLACEHOLDERS what it is"
            runs = [*runs, *[[*run, PLACEHOLDERS[name]] for run in runs]]
        elif "|" in word:
            runs = [[*run, choice] for run in runs for choice in word.split("|")]
        else:
            runs = [[*run, word] for run in runs]
    return runs


def tour_runs(text: str) -> list[Run]:
    runs: list[Run] = []
    for block in tour_blocks(text):
        for line in logical_lines(block):
            if line.startswith("gpuadvisor ") and not SHELL_SYNTAX.search(line):
                runs += [Run(line, tuple(args[1:]), None) for args in expand(shlex.split(line))]
            else:
                runs.append(Run(line, None, line))
    return runs


def test_the_tour_is_read_from_the_readme() -> None:
    """The reader finds both blocks and expands the notation as documented above."""
    text = README.read_text(encoding="utf-8")
    assert len(tour_blocks(text)) >= 2, "expected the Usage tour and Questionnaire blocks"
    labels = [run.label() for run in tour_runs(text)]
    assert len(labels) >= 25
    assert {
        "gpuadvisor schema profile",
        "gpuadvisor schema host",
        "gpuadvisor schema decision",
        "gpuadvisor rules lint",
        f"gpuadvisor rules lint {PLACEHOLDERS['DIR']}",
    } <= set(labels)
    assert not [label for label in labels if "#" in label or label.endswith("\\")], labels
    assert any(label.startswith("yes '' | gpuadvisor ask") for label in labels)


def test_reading_the_notation() -> None:
    sample = (
        "gpuadvisor a x|y   # two runs\n"
        "# a comment line\n"
        "gpuadvisor b [DIR] \\\n    --flag '#not a comment'\n"
        "printf 'q' > f.txt\n"
    )
    runs = tour_runs(f"## Usage tour\n\n```sh\n{sample}```\n\n## Next\n")
    assert [run.label() for run in runs] == [
        "gpuadvisor a x",
        "gpuadvisor a y",
        "gpuadvisor b --flag #not a comment",
        f"gpuadvisor b {PLACEHOLDERS['DIR']} --flag #not a comment",
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
    for name, source in CAPTURES.items():
        shutil.copyfile(source, folder / name)
    shutil.copytree(REPO / "examples", folder / "examples")
    style = folder / "acme-style"
    style.mkdir()
    for name, content in ACME_STYLE.items():
        (style / name).write_text(content, encoding="utf-8")
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
