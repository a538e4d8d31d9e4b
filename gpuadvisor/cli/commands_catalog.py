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
) -> None:
    """List SKUs, optionally filtered."""
    from gpuadvisor.inputs.catalog import SkuFilter, filter_skus
    from gpuadvisor.vocabulary import SEGMENTS

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
    )
    skus = filter_skus(load_overlaid_catalog(catalog).skus, wanted)
    if fmt is ListFormat.json:
        typer.echo(json.dumps([s.model_dump(mode="json") for s in skus], indent=2))
        return
    header = (
        f"{'id':38} {'segment':12} {'VRAM':>6} {'GB/s':>6} {'ECC':>4} {'cool':9} "
        f"{'W':>5} {'USD':>8}"
    )
    typer.echo(header)
    for s in skus:
        typer.echo(
            f"{s.id:38} {s.segment:12} {s.vram_gib:6.0f} {s.memory_bandwidth_gbs:6.0f} "
            f"{'yes' if s.ecc else 'no':>4} {s.cooling:9} {s.tdp_w:5.0f} {s.price_usd:8,.0f}"
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
    for key, value in data.items():
        note = f"   [{cite[key]}]" if key in cite else ""
        typer.echo(f"{key:22} {value}{note}")
    for key, text in disputes.items():
        typer.echo(f"dispute on {key}: {text}")


def catalog_lint(catalog: CatalogOpt = None) -> None:
    """Check schema, units, sources, dated prices and unique ids."""
    from gpuadvisor.inputs.catalog import lint_catalog

    loaded = load_overlaid_catalog(catalog)
    problems = lint_catalog(loaded)
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise InputError(f"{len(problems)} problem(s) in {len(loaded.skus)} SKUs")
    typer.echo(f"{len(loaded.skus)} SKUs, all sourced and well-formed")
