"""Paths that are not what they should be, at every entry point that reads or writes one.

Inputs: missing, a folder where a file is expected (and the reverse), below a regular
file, empty, a named pipe nobody writes to (must not hang), a socket. Outputs: a missing
folder, a folder, below a regular file (a guaranteed failure even for root), the input
itself. Each is refused with exit 2 naming the path, and leaves the disk as it was.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from .hostile_support import Cli, Inputs, make_inputs, run_refused


@pytest.fixture()
def inputs(tmp_path: Path) -> Inputs:
    return make_inputs(tmp_path)


# -- inputs -------------------------------------------------------------------------

#: Entry points that read a file: (name, argv for a given path).
FILE_SLOTS: dict[str, Callable[[Inputs, str], list[str]]] = {
    "advise PROFILE": lambda i, p: ["advise", p],
    "ask --from": lambda i, p: ["ask", "--from", p],
    "advise --evidence": lambda i, p: ["advise", str(i.profile), "--evidence", p],
    "import": lambda i, p: ["import", p],
}

#: Entry points that read a folder.
FOLDER_SLOTS: dict[str, Callable[[Inputs, str], list[str]]] = {
    "advise --catalog": lambda i, p: ["advise", str(i.profile), "--catalog", p],
    "advise --rules": lambda i, p: ["advise", str(i.profile), "--rules", p],
    "rules lint DIR": lambda i, p: ["rules", "lint", p],
    "advise --template": lambda i, p: ["advise", str(i.profile), "--template", p],
    "catalog list --catalog": lambda i, p: ["catalog", "list", "--catalog", p],
    "rules list --rules": lambda i, p: ["rules", "list", "--rules", p],
}


def _missing(i: Inputs) -> str:
    return str(i.root / "no-such-thing")


def _below_a_file(i: Inputs) -> str:
    return str(i.profile / "x.toml")


def _empty(i: Inputs) -> str:
    return str(i.write("empty.toml", "\n  \n"))


def _fifo(i: Inputs) -> str:
    path = i.root / "pipe.log"
    os.mkfifo(path)
    return str(path)


FILE_CASES: dict[str, tuple[Callable[[Inputs], str], str]] = {
    "missing": (_missing, "file not found"),
    "a-folder": (lambda i: str(i.catalog), "is a directory"),
    "below-a-file": (_below_a_file, "not found"),
    "empty": (_empty, "empty"),
}
if hasattr(os, "mkfifo"):
    FILE_CASES["fifo-nobody-writes"] = (_fifo, "empty")


@pytest.mark.parametrize("slot", FILE_SLOTS)
@pytest.mark.parametrize("case", FILE_CASES)
def test_bad_input_file_paths(cli: Cli, inputs: Inputs, slot: str, case: str) -> None:
    make, fragment = FILE_CASES[case]
    path = make(inputs)
    run_refused(cli, inputs, FILE_SLOTS[slot](inputs, path), fragment, where=path)


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets here")
@pytest.mark.parametrize("slot", FILE_SLOTS)
def test_a_socket_is_not_a_file(cli: Cli, inputs: Inputs, slot: str) -> None:
    path = str(inputs.root / "s.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        run_refused(cli, inputs, FILE_SLOTS[slot](inputs, path), "cannot read", where=path)


FOLDER_CASES: dict[str, tuple[Callable[[Inputs], str], str]] = {
    "missing": (_missing, ""),
    "a-file": (lambda i: str(i.profile), ""),
    "below-a-file": (_below_a_file, ""),
}


@pytest.mark.parametrize("slot", FOLDER_SLOTS)
@pytest.mark.parametrize("case", FOLDER_CASES)
def test_bad_input_folder_paths(cli: Cli, inputs: Inputs, slot: str, case: str) -> None:
    make, _ = FOLDER_CASES[case]
    path = make(inputs)
    result = run_refused(cli, inputs, FOLDER_SLOTS[slot](inputs, path), where=path)
    assert "not found" in result.stderr or "does not exist" in result.stderr


def test_rules_lint_of_a_folder_without_rules(cli: Cli, inputs: Inputs) -> None:
    empty = inputs.root / "no-rules"
    empty.mkdir()
    run_refused(cli, inputs, ["rules", "lint", str(empty)], "no rule files", where=str(empty))


def test_an_overlay_file_that_is_a_folder(cli: Cli, inputs: Inputs) -> None:
    folder = inputs.catalog / "odd.toml"
    folder.mkdir()
    args = ["advise", str(inputs.profile), "--catalog", str(inputs.catalog)]
    run_refused(cli, inputs, args, "is a directory", where=str(folder))


# -- outputs ------------------------------------------------------------------------

#: Commands that write a file with -o, and what they need to succeed otherwise.
WRITERS: dict[str, tuple[Callable[[Inputs], list[str]], str]] = {
    "advise": (lambda i: ["advise", str(i.profile), "--no-sensitivity"], ""),
    "advise --format json": (
        lambda i: ["advise", str(i.profile), "--no-sensitivity", "--format", "json"],
        "",
    ),
    "import": (lambda i: ["import", str(i.evidence)], ""),
    "init": (lambda i: ["init"], ""),
    "init --example": (lambda i: ["init", "--example", "hyperparameter-sweep"], ""),
    "ask --from": (lambda i: ["ask", "--from", str(i.profile)], "\n" * 60),
}

OUTPUT_CASES: dict[str, tuple[Callable[[Inputs], Path], str]] = {
    "missing-folder": (lambda i: i.root / "nowhere" / "out.txt", "does not exist"),
    "a-folder": (lambda i: i.catalog, "is a directory"),
    "below-a-file": (lambda i: i.profile / "out.txt", "not a folder"),
}


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("case", OUTPUT_CASES)
def test_unwritable_outputs(cli: Cli, inputs: Inputs, writer: str, case: str) -> None:
    make_args, stdin = WRITERS[writer]
    target, fragment = OUTPUT_CASES[case]
    out = target(inputs)
    args = [*make_args(inputs), "-o", str(out)]
    run_refused(cli, inputs, args, fragment, where=str(out), stdin=stdin)


@pytest.mark.parametrize("writer", ["advise", "import", "ask --from"])
def test_a_failed_run_leaves_an_existing_output_intact(
    cli: Cli, inputs: Inputs, writer: str
) -> None:
    out = inputs.write("report.out", "the signed version\n")
    broken = inputs.write("broken.toml", "[workload\n")
    args = {
        "advise": ["advise", str(broken), "-o", str(out)],
        "import": ["import", str(inputs.evidence), str(broken), "-o", str(out)],
        "ask --from": ["ask", "--from", str(broken), "-o", str(out)],
    }[writer]
    run_refused(cli, inputs, args, where=str(broken))
    assert out.read_text(encoding="utf-8") == "the signed version\n"


@pytest.mark.parametrize(
    "args",
    [
        lambda i: ["advise", str(i.profile), "-o", str(i.profile)],
        lambda i: ["advise", str(i.profile), "-e", str(i.evidence), "-o", str(i.evidence)],
        lambda i: ["import", str(i.evidence), "-o", str(i.evidence)],
    ],
    ids=["advise-over-its-profile", "advise-over-its-evidence", "import-over-its-capture"],
)
def test_an_output_may_not_overwrite_an_input(
    cli: Cli, inputs: Inputs, args: Callable[[Inputs], list[str]]
) -> None:
    run_refused(cli, inputs, args(inputs), "would overwrite the input")


def test_ask_may_rewrite_its_starting_profile(cli: Cli, inputs: Inputs) -> None:
    """Updating a profile in place is what ``ask --from P -o P`` is for."""
    result = cli("ask", "--from", str(inputs.profile), "-o", str(inputs.profile), stdin="\n" * 60)
    assert result.exit_code == 0, result.stderr
    assert "Hostile input test" in inputs.profile.read_text(encoding="utf-8")


def test_interrupted_write_leaves_no_temporary_file(
    cli: Cli, inputs: Inputs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure after the temporary file exists (disk full at fsync) removes it."""

    def full(_fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    out = inputs.write("kept.md", "old\n")
    result = run_refused(
        cli, inputs, ["advise", str(inputs.profile), "--no-sensitivity", "-o", str(out)]
    )
    assert "No space left" in result.stderr
    assert out.read_text(encoding="utf-8") == "old\n"


def test_a_link_to_a_file_is_followed_and_stays_a_link(cli: Cli, inputs: Inputs) -> None:
    real = inputs.write("reports/real.md", "old\n")
    link = inputs.root / "latest.md"
    link.symlink_to(real)
    result = cli("advise", str(inputs.profile), "--no-sensitivity", "-o", str(link))
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8").startswith("# GPU purchase recommendation")
    assert not [p for p in real.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_written_through_not_replaced(cli: Cli, inputs: Inputs) -> None:
    """``-o /dev/stdout`` style targets: renaming over a device node would replace it
    (as root, for everyone), so a target that is not a regular file is written to."""
    pipe = inputs.root / "out.pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()))
    reader.start()
    try:
        result = cli("advise", str(inputs.profile), "--no-sensitivity", "-o", str(pipe))
    finally:
        reader.join(timeout=30)
    assert result.exit_code == 0, result.stderr
    assert received and received[0].startswith(b"# GPU purchase recommendation")
    assert pipe.is_fifo()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_nobody_reads_fails_at_once(cli: Cli, inputs: Inputs) -> None:
    pipe = inputs.root / "out.pipe"
    os.mkfifo(pipe)
    result = cli("advise", str(inputs.profile), "--no-sensitivity", "-o", str(pipe))
    assert result.exit_code == 2, result.stderr
    assert "cannot write output" in result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX umask")
def test_new_outputs_follow_the_umask(cli: Cli, inputs: Inputs) -> None:
    old = os.umask(0o077)
    try:
        out = inputs.root / "private.md"
        assert cli("advise", str(inputs.profile), "--no-sensitivity", "-o", str(out)).exit_code == 0
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o600


def test_closed_stdout_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """``gpuadvisor advise p.toml >&-``: Python starts with sys.stdout set to None."""
    from gpuadvisor.cli.output import emit
    from gpuadvisor.errors import InputError

    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(InputError, match="standard output is closed"):
        emit("text", None)
