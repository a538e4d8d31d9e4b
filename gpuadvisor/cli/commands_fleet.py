"""``fleet``: every GPU host a Prometheus watches, judged, and a purchase plan per group."""

from __future__ import annotations

import datetime as dt
import enum
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuadvisor.cli.options import CatalogOpt, OutputOpt, ReportFormat, RulesOpt
from gpuadvisor.cli.output import emit, not_an_input
from gpuadvisor.errors import InputError

if TYPE_CHECKING:
    from gpuadvisor.fleet.build import Options
    from gpuadvisor.fleet.client import Client
    from gpuadvisor.fleet.profiles import Fleet


class FixSort(str, enum.Enum):
    severity = "severity"
    host = "host"
    gpus = "gpus"
    fixes = "fixes"


def parse_at(text: str | None) -> float:
    """When the window ends: now, unix seconds, or an ISO 8601 time (UTC unless it says)."""
    if text is None:
        return float(math.floor(time.time()))
    stripped = text.strip()
    try:
        return float(stripped) if stripped.replace(".", "", 1).isdigit() else _iso(stripped)
    except ValueError:
        raise InputError(
            f"{text!r} is not a time",
            field="--at",
            hint="give unix seconds or an ISO 8601 time such as 2026-12-01T08:00:00Z",
        ) from None


def _iso(text: str) -> float:
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.timestamp()


def fleet(
    prometheus: Annotated[
        str,
        typer.Option(
            "--prometheus",
            metavar="URL",
            help="Prometheus's address (or Thanos Query's, or Mimir's Prometheus API with "
            "its path prefix).",
        ),
    ],
    profiles: Annotated[
        Path,
        typer.Option(
            "--profiles",
            metavar="FILE",
            help="TOML mapping label selectors (host groups) to workload profiles.",
        ),
    ],
    window: Annotated[
        str, typer.Option("--window", metavar="DURATION", help="How far back to judge (7d, 36h).")
    ] = "7d",
    selector: Annotated[
        str,
        typer.Option(
            "--selector", metavar="SEL", help='Only these hosts\' series, e.g. {cluster="a"}.'
        ),
    ] = "",
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="Report format.")] = (
        ReportFormat.md
    ),
    output: OutputOpt = None,
    top: Annotated[
        int, typer.Option("--top", min=1, max=10000, help="Hosts to fix listed per group.")
    ] = 20,
    sort: Annotated[
        FixSort, typer.Option("--sort", help="Order of the hosts to fix (worst first by default).")
    ] = FixSort.severity,
    at: Annotated[
        str | None,
        typer.Option(
            "--at", metavar="TIME", help="When the window ends (ISO 8601 or unix s; default now)."
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=1, max=3600, help="Seconds one query may take."),
    ] = 60.0,
    max_mib: Annotated[
        int, typer.Option("--max-mib", min=1, max=16384, help="Largest answer read, MiB.")
    ] = 256,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", min=1, max=512, help="Processes judging hosts (default: cores)."),
    ] = None,
    catalog: CatalogOpt = None,
    rules: RulesOpt = None,
    serve: Annotated[
        bool, typer.Option("--serve", help="Serve the report as a web page instead of writing it.")
    ] = False,
    host: Annotated[
        str, typer.Option("--host", help="With --serve: the address to listen on.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="With --serve: the port (0: any free port).")
    ] = 8766,
    refresh: Annotated[
        float,
        typer.Option(
            "--refresh",
            min=0,
            max=86400,
            help="With --serve: ask Prometheus again when the page is older than this many "
            "seconds (0: never; never with --at).",
        ),
    ] = 300.0,
) -> None:
    """Judge every GPU host a Prometheus watches (dcgm-exporter and node-exporter series)
    with the profile of its group, and plan the purchase for each group.

    Figures are window aggregates computed by Prometheus. Series missing for some hosts
    give a partial report that says what is missing (exit 0); an unreachable Prometheus,
    a query it refuses, or bad input exit 2.
    """
    from gpuadvisor.fleet.build import Options, run_fleet
    from gpuadvisor.fleet.client import Client, check_url
    from gpuadvisor.fleet.profiles import load_profiles
    from gpuadvisor.fleet.promql import EVERYTHING, parse_selector, parse_window

    url = check_url(prometheus)
    window_s = parse_window(window)
    chosen = parse_selector(selector, field="--selector") if selector.strip() else EVERYTHING
    moment = parse_at(at)
    if fmt is ReportFormat.pdf and output is None and not serve:
        raise InputError("PDF output needs a file: add -o FILE.pdf", field="--format pdf")
    not_an_input(output, [profiles])
    groups = load_profiles(profiles)
    options = Options(
        selector=chosen,
        selector_text=chosen.text(),
        window_s=window_s,
        at=moment,
        top=top,
        sort=sort.value,
        workers=jobs,
        catalog_overlays=tuple(catalog or ()),
        rules_overlays=tuple(rules or ()),
    )
    client = Client(url, timeout_s=timeout, max_bytes=max_mib * 2**20)
    if serve:
        _serve(client, groups, options, host, port, None if at or not refresh else refresh)
        return
    from gpuadvisor.fleet.report import render

    report, timings = run_fleet(client, groups, options)
    typer.echo(
        f"fleet: {timings.hosts} host(s), {timings.gpus} GPU(s); queries {timings.query_s:.1f} s, "
        f"judging {timings.judge_s:.1f} s",
        err=True,
    )
    partial = [m for m in report.missing if not m.everywhere or m.reason != "no series"]
    if partial or report.warnings:
        typer.echo(
            f"fleet: partial result: {len(partial)} series missing for some hosts or failed, "
            f"{len(report.warnings)} warning(s) from Prometheus (the report's "
            "'What is missing' names them)",
            err=True,
        )
    emit(render(report, fmt.value), output)


def _serve(
    client: Client, groups: Fleet, options: Options, host: str, port: int, refresh_s: float | None
) -> None:
    from gpuadvisor.fleet.serve import create_app
    from gpuadvisor.web import server

    address = server.resolve(host, port)
    warning = server.exposure_warning(address, host)
    if warning is not None:
        typer.echo(warning, err=True)
    app = create_app(
        client,
        groups,
        options,
        refresh_s=refresh_s,
        allowed_hosts=server.LOOPBACK_NAMES if warning is None else None,
    )
    sock = server.listen(address)
    bound = int(sock.getsockname()[1])
    typer.echo(
        f"gpuadvisor: serving the fleet report on {address.url(bound)} (Ctrl-C stops it)",
        err=True,
    )
    try:
        server.run(app, sock)
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it shut down for
        pass
    finally:
        sock.close()
    typer.echo("gpuadvisor: stopped", err=True)
