"""``gpuadvisor serve``: the README's command starts the page, loopback by default, a
loud warning for any other address, a port in use is an input error.

Nothing here listens anywhere but 127.0.0.1: the warning for other addresses is tested
with the listening step replaced.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from gpuadvisor.web import server

from .conftest import REPO, CliResult

Cli = Callable[..., CliResult]


def readme_command() -> list[str]:
    """The command the README's Web page section gives, as words."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Web page") :]
    section = section[: section.index("\n### ", 1)]
    (block,) = re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)
    return block.strip().split(" && ")[-1].partition("#")[0].split()  # a comment may follow


def test_the_readme_starts_the_page_with_the_installed_command() -> None:
    command = readme_command()
    assert command == [".venv/bin/gpuadvisor", "serve"]
    installed = Path(sys.executable).parent / "gpuadvisor"
    program = [str(installed)] if installed.exists() else [sys.executable, "-m", "gpuadvisor"]
    with subprocess.Popen(
        [*program, *command[1:], "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stderr is not None
        try:
            line = child.stderr.readline()
            found = re.search(r"on (http://127\.0\.0\.1:\d+/) \(Ctrl-C", line)
            assert found, line
            page = httpx.get(found.group(1), timeout=30)
            assert page.status_code == 200 and "GPU purchase questionnaire" in page.text
            child.send_signal(signal.SIGINT)
            assert child.wait(30) == 0
            assert "gpuadvisor: stopped" in child.stderr.read()
        finally:
            if child.poll() is None:
                child.kill()


@pytest.fixture()
def no_listening(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Replace the listening and serving steps; record what would be listened on."""
    calls: list[Any] = []

    class FakeSocket:
        def getsockname(self) -> tuple[str, int]:
            return (calls[0].host, calls[0].port)

        def close(self) -> None:
            calls.append("closed")

    def listen(address: server.Address) -> FakeSocket:
        calls.append(address)
        return FakeSocket()

    def run(app: Any, sock: Any) -> None:
        calls.append(app)

    monkeypatch.setattr(server, "listen", listen)
    monkeypatch.setattr(server, "run", run)
    return calls


def test_the_default_is_loopback_without_a_warning(cli: Cli, no_listening: list[Any]) -> None:
    result = cli("serve")
    assert result.exit_code == 0, result.stderr
    address = no_listening[0]
    assert (address.host, address.port, address.loopback) == ("127.0.0.1", 8765, True)
    assert "WARNING" not in result.stderr
    assert "serving the questionnaire on http://127.0.0.1:8765/" in result.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10"])
def test_another_address_says_loudly_that_it_exposes_the_page(
    cli: Cli, no_listening: list[Any], host: str
) -> None:
    result = cli("serve", "--host", host, "--port", "9")
    assert result.exit_code == 0, result.stderr
    assert f"WARNING: --host {host} exposes this page" in result.stderr
    assert "no login" in result.stderr
    assert no_listening[0].loopback is False


def test_the_warning_names_what_is_exposed() -> None:
    assert server.exposure_warning(server.resolve("127.0.0.1", 1), "127.0.0.1") is None
    assert server.exposure_warning(server.resolve("::1", 1), "::1") is None
    everywhere = server.exposure_warning(server.resolve("0.0.0.0", 1), "0.0.0.0")
    assert everywhere is not None and "every network this machine is on" in everywhere


def test_a_port_in_use_is_an_input_error(cli: Cli) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = cli("serve", "--port", str(port))
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr and "--port" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "message"), [(["--port", "70000"], "not a port number")])
def test_a_wrong_port_is_an_input_error(cli: Cli, args: list[str], message: str) -> None:
    result = cli("serve", *args)
    assert result.exit_code == 2 and message in result.stderr


def test_the_help_names_the_options(cli: Cli) -> None:
    result = cli("serve", "--help")
    assert result.exit_code == 0
    assert "--host" in result.stdout and "--port" in result.stdout and "8765" in result.stdout


def test_other_commands_do_not_import_the_web_stack() -> None:
    code = (
        "import sys; from gpuadvisor.cli import app; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'uvicorn', 'python_multipart', 'httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
