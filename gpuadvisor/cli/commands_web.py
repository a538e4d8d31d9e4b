"""``serve``: the questionnaire and the report as a local web page."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuadvisor.cli.options import CatalogOpt, RulesOpt


def serve(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on. The default answers only this machine; any other "
            "address exposes the page (a warning says so).",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="Port to listen on (0: any free port).")
    ] = 8765,
    catalog: CatalogOpt = None,
    rules: RulesOpt = None,
) -> None:
    """Serve the questionnaire and the report as a web page (Ctrl-C stops it)."""
    # The web stack is imported only by this command, never by the others.
    from gpuadvisor.web import server
    from gpuadvisor.web.app import create_app

    address = server.resolve(host, port)
    warning = server.exposure_warning(address, host)
    if warning is not None:
        typer.echo(warning, err=True)
    app = create_app(
        catalog_overlays=catalog or [],
        rules_overlays=rules or [],
        exposed_at=None if warning is None else address.url(),
        allowed_hosts=server.LOOPBACK_NAMES if warning is None else None,
    )
    sock = server.listen(address)
    bound_port = int(sock.getsockname()[1])
    typer.echo(
        f"gpuadvisor: serving the questionnaire on {address.url(bound_port)} (Ctrl-C stops it)",
        err=True,
    )
    try:
        server.run(app, sock)
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it shut down for
        pass
    finally:
        sock.close()
    typer.echo("gpuadvisor: stopped", err=True)
