"""``catalog list|show|lint``: the GPU SKU catalog, browsed and checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuadvisor.cli.options import CatalogOpt, ListFormat, finite
from gpuadvisor.errors import InputError
from gpuadvisor.vocabulary import COOLINGS


def load_overlaid_catalog(overlays: list[Path] | None) -> Any:
    from gpuadvisor.inputs.catalog import load_catalog

    return load_catalog(overlays or [])


def catalog_list(
    catalog: CatalogOpt = None,
    fmt: Annotated[ListFormat, typer.Option("--format", "-f")] = ListFormat.table,
    segment: Annotated[
        str | None, typer.Option(help="consumer | professional | datacenter")
    ] = None,
    min_vram: Annotated[float | None, typer.Option("--min-vram", help="GiB")] = None,
    ecc: Annotated[bool | None, typer.Option("--ecc/--no-ecc")] = None,
    frame_lock: Annotated[bool | None, typer.Option("--frame-lock/--no-frame-lock")] = None,
    vgpu: Annotated[bool | None, typer.Option("--vgpu/--no-vgpu")] = None,
    cooling: Annotated[str | None, typer.Option(help=" | ".join(COOLINGS))] = None,
    max_slots: Annotated[float | None, typer.Option("--max-slots")] = None,
    max_power: Annotated[float | None, typer.Option("--max-power", help="W")] = None,
    max_price: Annotated[float | None, typer.Option("--max-price", help="USD")] = None,
    status: Annotated[
        str | None, typer.Option(help="current | discontinued | eol (can still be bought?)")
    ] = None,
    vgpu_edition: Annotated[
        str | None, typer.Option("--vgpu-edition", help="vpc | vws | vcs (NVIDIA vGPU edition)")
    ] = None,
) -> None:
    """List SKUs, optionally filtered (an unpriced SKU never passes --max-price)."""
    from gpuadvisor.inputs.catalog import SkuFilter, filter_skus
    from gpuadvisor.vocabulary import SEGMENTS, SKU_STATUSES, VGPU_EDITIONS

    if status is not None and status not in SKU_STATUSES:
        raise InputError(
            f"unknown status {status!r}", field="--status", hint=", ".join(SKU_STATUSES)
        )
    if vgpu_edition is not None and vgpu_edition not in VGPU_EDITIONS:
        raise InputError(
            f"unknown vGPU edition {vgpu_edition!r}",
            field="--vgpu-edition",
            hint=", ".join(VGPU_EDITIONS),
        )

    if segment is not None and segment not in SEGMENTS:
        raise InputError(
            f"unknown segment {segment!r}", field="--segment", hint=", ".join(SEGMENTS)
        )
    if cooling is not None and cooling not in COOLINGS:
        raise InputError(
            f"unknown cooling {cooling!r}", field="--cooling", hint=", ".join(COOLINGS)
        )
    for value, option in (
        (min_vram, "--min-vram"),
        (max_slots, "--max-slots"),
        (max_power, "--max-power"),
        (max_price, "--max-price"),
    ):
        finite(value, option)
    wanted = SkuFilter(
        segment=segment,
        min_vram_gib=min_vram,
        ecc=ecc,
        frame_lock=frame_lock,
        vgpu=vgpu,
        cooling=cooling,
        max_slot_width=max_slots,
        max_tdp_w=max_power,
        max_price_usd=max_price,
        status=status,
        vgpu_edition=vgpu_edition,
    )
    skus = filter_skus(load_overlaid_catalog(catalog).skus, wanted)
    if fmt is ListFormat.json:
        typer.echo(json.dumps([s.model_dump(mode="json") for s in skus], indent=2))
        return
    header = (
        f"{'id':38} {'segment':12} {'VRAM':>6} {'GB/s':>6} {'ECC':>4} {'cool':9} "
        f"{'W':>5} {'USD':>8} {'status':12} vGPU"
    )
    typer.echo(header)
    for s in skus:
        price = "quote" if s.price_usd is None else f"{s.price_usd:,.0f}"
        editions = ",".join(s.vgpu_editions or ()) or "-"
        typer.echo(
            f"{s.id:38} {s.segment:12} {s.vram_gib:6.0f} {s.memory_bandwidth_gbs:6.0f} "
            f"{'yes' if s.ecc else 'no':>4} {s.cooling:9} {s.tdp_w:5.0f} {price:>8} "
            f"{s.status or 'unknown':12} {editions}"
        )


def catalog_show(
    sku_id: Annotated[str, typer.Argument(metavar="SKU", help="SKU id.")],
    catalog: CatalogOpt = None,
) -> None:
    """Show every field of one SKU with its cited sources."""
    sku = load_overlaid_catalog(catalog).get(sku_id)
    data = sku.model_dump(mode="json")
    cite = data.pop("cite")
    disputes = data.pop("disputes")
    weak = data.pop("weak_sources")
    reviewed = data.pop("lint")
    certified = data.pop("certified_for")
    for key, value in data.items():
        note = f"   [{cite[key]}]" if key in cite else ""
        typer.echo(f"{key:22} {value}{note}")
    for entry in certified:
        release = f" {entry['release']}" if entry["release"] else ""
        typer.echo(f"certified for {entry['app']}{release}   [{entry['source']}]")
    for key, text in disputes.items():
        typer.echo(f"dispute on {key}: {text}")
    for key, text in weak.items():
        typer.echo(f"weak source for {key}: {text}")
    for code, text in reviewed.items():
        typer.echo(f"reviewed lint warning {code}: {text}")


def catalog_lint(catalog: CatalogOpt = None) -> None:
    """Check schema, units, sources, dated prices, status, vGPU editions, FP64, video and
    display figures, accessories and unique ids; warn on old prices and undated statuses.
    A warning reviewed in an entry's [lint] table prints as a note with its reason (see
    docs/extending.md, "A SKU")."""
    from gpuadvisor.inputs.catalog_lint import lint_catalog, review_warnings

    loaded = load_overlaid_catalog(catalog)
    problems = lint_catalog(loaded)
    warnings = review_warnings(loaded)
    for warning in warnings:
        if warning.reason is None:
            typer.echo(f"warning: {warning}", err=True)
        else:
            typer.echo(f"note: {warning} (reviewed: {warning.reason})", err=True)
    for problem in problems:
        typer.echo(problem, err=True)
    open_count = sum(1 for w in warnings if w.reason is None)
    tally = f"{open_count} warning(s), {len(warnings) - open_count} reviewed"
    entries = f"{len(loaded.skus)} SKUs and {len(loaded.accessories)} accessories"
    if problems:
        raise InputError(f"{len(problems)} problem(s) in {entries}; {tally}")
    typer.echo(f"{entries}, all sourced and well-formed; {tally}")
