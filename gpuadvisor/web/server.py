"""Where the page listens: the address ``--host`` and ``--port`` name, the warning when
that address reaches beyond this machine, and uvicorn serving the application."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Final

from starlette.types import ASGIApp

from gpuadvisor.errors import InputError
from gpuadvisor.web.guard import LOOPBACK_NAMES

__all__ = [
    "LOOPBACK_NAMES",
    "MAX_REQUEST_HEAD_BYTES",
    "Address",
    "exposure_warning",
    "listen",
    "resolve",
    "run",
]

#: The longest request line and headers read (uvicorn's h11 limit, 16 KiB by default):
#: the answers travel in the page's address, and long notes with a long list of
#: application names make one of some 12 KiB (each answer is at most 4,000 characters).
MAX_REQUEST_HEAD_BYTES: Final = 1024 * 1024

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8765


@dataclass(frozen=True)
class Address:
    family: socket.AddressFamily
    host: str  # the numeric address the socket binds
    port: int

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.host).is_loopback

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if self.family == socket.AF_INET6 else self.host
        return f"http://{host}:{self.port if port is None else port}/"


def resolve(host: str, port: int) -> Address:
    """The address ``host`` names (a name is looked up once, here)."""
    if not 0 <= port <= 65535:
        raise InputError(f"{port} is not a port number (0-65535)", field="--port")
    try:
        found = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
        )
    except (socket.gaierror, UnicodeError) as exc:
        raise InputError(f"cannot resolve {host!r}: {exc}", field="--host") from None
    family, _, _, _, sockaddr = found[0]
    return Address(socket.AddressFamily(family), str(sockaddr[0]), port)


def exposure_warning(address: Address, asked: str) -> str | None:
    """The warning to print when the page would be reachable from other machines."""
    if address.loopback:
        return None
    reach = (
        "every network this machine is on"
        if ipaddress.ip_address(address.host).is_unspecified
        else f"the network of {address.host}"
    )
    return "\n".join(
        [
            "!" * 78,
            f"WARNING: --host {asked} exposes this page to {reach}.",
            "Anyone who can reach it can fill in questionnaires, upload files and read",
            "the reports made from them: there is no login and no encryption (plain HTTP).",
            f"Keep the default (--host {DEFAULT_HOST}) unless that is what you want.",
            "!" * 78,
        ]
    )


def listen(address: Address) -> socket.socket:
    """A listening socket, bound before the server starts, so a port in use is an
    input error (exit 2) and port 0 tells which port it got."""
    # IPPROTO_TCP named, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets
    # that say they are TCP; without it every kept-alive answer waits 40 ms.
    sock = socket.socket(address.family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if address.family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((address.host, address.port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        where = f"{address.host}:{address.port}"
        raise InputError(
            f"cannot listen on {where}: {exc.strerror or exc}",
            field="--port" if exc.errno in (98, 48, 10048) else "--host",
            hint="another program (or another gpuadvisor serve) may be using it; "
            "give another --port",
        ) from None
    sock.set_inheritable(True)
    return sock


def run(app: ASGIApp, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until interrupted (Ctrl-C)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        server_header=False,
        lifespan="off",
        timeout_graceful_shutdown=5,
        h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
    )
    uvicorn.Server(config).run(sockets=[sock])
