"""``size``: the memory one job needs, from the model a profile (or the flags) describes,
term by term with its assumptions, and how fast a language model can run on given cards."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpuadvisor.cli.options import CatalogOpt, OutputOpt
from gpuadvisor.cli.output import emit, not_an_input
from gpuadvisor.errors import InputError

if TYPE_CHECKING:
    from gpuadvisor.decision.model import Sizing
    from gpuadvisor.inputs.workload_model import Model
    from gpuadvisor.sizing.estimate import MemoryEstimate


class SizeFormat(str, enum.Enum):
    text = "text"
    json = "json"


class PrecisionChoice(str, enum.Enum):
    fp32 = "fp32"
    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"
    int8 = "int8"
    int4 = "int4"


class TaskChoice(str, enum.Enum):
    inference = "inference"
    full_finetune = "full-finetune"
    lora = "lora"
    qlora = "qlora"
    pretrain = "pretrain"
    unknown = "unknown"


class FamilyChoice(str, enum.Enum):
    llm = "llm"
    diffusion = "diffusion"
    vision = "vision"
    other = "other"


#: Model field -> the flag that sets it, for messages about a flag's value.
FLAGS: dict[str, str] = {
    "name": "--model",
    "family": "--family",
    "params_b": "--params-b",
    "active_params_b": "--active-params-b",
    "precision": "--precision",
    "task": "--task",
    "context_tokens": "--context",
    "batch": "--batch",
    "concurrent_sequences": "--concurrent",
    "hf_config": "--hf-config",
    "lora_rank": "--lora-rank",
    "activation_checkpointing": "--checkpointing",
    "resolution": "--resolution",
    "vae_slicing": "--vae-slicing",
}


def size(
    profile: Annotated[
        Path | None,
        typer.Argument(help="Workload profile with [workload.model] (flags override it)."),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--model", help="A model of the table (see --list-models).")
    ] = None,
    params_b: Annotated[
        float | None, typer.Option("--params-b", help="Parameters, in billions.")
    ] = None,
    active_params_b: Annotated[
        float | None,
        typer.Option("--active-params-b", help="Mixture-of-experts: parameters per token."),
    ] = None,
    precision: Annotated[
        PrecisionChoice | None, typer.Option("--precision", help="Weights' number format.")
    ] = None,
    task: Annotated[TaskChoice | None, typer.Option("--task", help="What the job does.")] = None,
    context: Annotated[
        int | None, typer.Option("--context", help="Tokens per sequence (llm).")
    ] = None,
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            help="Samples per training step; for a diffusion model, images generated at "
            "once. A language model being served takes --concurrent instead (refused).",
        ),
    ] = None,
    concurrent: Annotated[
        int | None, typer.Option("--concurrent", help="Sequences in flight (llm serving).")
    ] = None,
    hf_config: Annotated[
        Path | None, typer.Option("--hf-config", help="A local Hugging Face config.json.")
    ] = None,
    family: Annotated[
        FamilyChoice | None, typer.Option("--family", help="llm | diffusion | vision | other")
    ] = None,
    lora_rank: Annotated[int | None, typer.Option("--lora-rank", help="LoRA rank r.")] = None,
    resolution: Annotated[
        str | None,
        typer.Option("--resolution", help="Diffusion: image size in pixels, 1024 or 1216x832."),
    ] = None,
    vae_slicing: Annotated[
        bool | None,
        typer.Option(
            "--vae-slicing/--no-vae-slicing", help="Diffusion: decode one image at a time."
        ),
    ] = None,
    checkpointing: Annotated[
        bool | None,
        typer.Option("--checkpointing/--no-checkpointing", help="Activation checkpointing."),
    ] = None,
    cards: Annotated[
        list[str] | None,
        typer.Option(
            "--card", metavar="SKU", help="Catalog SKU to show speed bounds on (repeatable)."
        ),
    ] = None,
    catalog: CatalogOpt = None,
    fmt: Annotated[SizeFormat, typer.Option("--format", "-f", help="text or json.")] = (
        SizeFormat.text
    ),
    list_models: Annotated[
        bool, typer.Option("--list-models", help="List the model table and exit.")
    ] = False,
    output: OutputOpt = None,
) -> None:
    """Estimate the memory one job needs from its model, and its speed on cards.

    Give a PROFILE with [workload.model], or describe the model with the flags (flags
    override the profile). --format json prints the decision's `sizing` object.
    """
    if list_models:
        emit(_model_list(), output)
        return
    not_an_input(output, [p for p in (profile, hf_config) if p is not None])
    flags: dict[str, Any] = {
        "name": name,
        "family": family.value if family else None,
        "params_b": params_b,
        "active_params_b": active_params_b,
        "precision": precision.value if precision else None,
        "task": task.value if task else None,
        "context_tokens": context,
        "batch": batch,
        "concurrent_sequences": concurrent,
        "hf_config": str(hf_config.absolute()) if hf_config is not None else None,
        "lora_rank": lora_rank,
        "activation_checkpointing": checkpointing,
        "resolution": _resolution(resolution) if resolution is not None else None,
        "vae_slicing": vae_slicing,
    }
    given = {key: value for key, value in flags.items() if value is not None}
    stated, described = _from_profile(profile)
    if not given and described is None:
        if profile is None:
            raise InputError(
                "describe a model: give a PROFILE with [workload.model], or --model, "
                "--params-b or --hf-config",
                hint="gpuadvisor size --list-models lists the models gpuadvisor knows",
            )
        emit(_render(_sizing_object(None, stated), None, [], fmt), output)
        return
    model = _model({**(described or {}), **given}, profile)
    estimate = _estimate(model, profile)
    speeds = _speeds(estimate, cards or [], catalog)
    emit(_render(_sizing_object(estimate, stated), estimate, speeds, fmt), output)


def _resolution(text: str) -> int | list[int]:
    """``1024`` (a square image) or ``1216x832`` (width x height)."""
    parts = text.strip().lower().replace("×", "x").split("x")
    if not all(part.strip().isdigit() for part in parts) or len(parts) > 2:
        raise InputError(f"expected pixels as 1024 or 1216x832, got {text!r}", field="--resolution")
    sides = [int(part) for part in parts]
    return sides[0] if len(sides) == 1 else sides


def _from_profile(profile: Path | None) -> tuple[float | None, dict[str, Any] | None]:
    """The profile's stated need and its [workload.model] as data."""
    if profile is None:
        return None, None
    from gpuadvisor.pipeline import read_profile

    loaded, _ = read_profile(profile)
    model = loaded.workload.model
    described = model.model_dump(exclude_unset=True) if model is not None else None
    return loaded.workload.vram_need_gib, described


def _model(data: dict[str, Any], profile: Path | None) -> Model:
    from pydantic import ValidationError

    from gpuadvisor.inputs.workload_model import Model

    if "name" in data or "hf_config" in data:
        data.setdefault("params_b", None)
    try:
        return Model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = str(error["loc"][0]) if error["loc"] else ""
        message = (
            "required: give --params-b, --model or --hf-config"
            if (error["type"] == "missing")
            else str(error["msg"])
        )
        raise InputError(
            message,
            file=str(profile) if profile is not None and key not in FLAGS else None,
            field=FLAGS.get(key, f"workload.model.{key}"),
        ) from None


def _estimate(model: Model, profile: Path | None) -> MemoryEstimate:
    """The estimate; a problem is named by its flag, or by the profile's file and line."""
    from gpuadvisor.pipeline import estimate_model

    try:
        return estimate_model(model, profile)
    except InputError as exc:
        if profile is None and exc.field and exc.field.startswith("workload.model."):
            exc.field = FLAGS.get(exc.field.rsplit(".", 1)[1], exc.field)
        raise


def _sizing_object(estimate: MemoryEstimate | None, stated: float | None) -> Sizing:
    from gpuadvisor.decision.sizing import sizing_object

    return sizing_object(estimate, stated=stated, used=stated)


def _speeds(
    estimate: MemoryEstimate, cards: list[str], catalog: list[Path] | None
) -> list[tuple[str, Any]]:
    if not cards:
        return []
    from gpuadvisor.inputs.catalog import load_catalog
    from gpuadvisor.sizing import speed_on

    loaded = load_catalog(catalog or [])
    found = []
    for card in cards:
        sku = loaded.get(card)
        bound = speed_on(  # one model instance runs on one GPU of a board of several
            estimate,
            bandwidth_gbs=sku.gpu_bandwidth_gbs,
            fp16_tflops=sku.fp16_tensor_tflops / sku.gpus_per_board,
            architecture=sku.architecture,
        )
        if bound is None:
            raise InputError(
                "speed bounds are for a language model being served (family llm, task inference)",
                field="--card",
            )
        need = estimate.total_gib
        fits = (
            "" if need <= sku.vram_gib else f" (does not fit: {need:,.1f} GiB > {sku.vram_gib:g})"
        )
        found.append((sku.name + fits, bound))
    return found


def _render(
    sizing: Sizing, estimate: MemoryEstimate | None, speeds: list[tuple[str, Any]], fmt: SizeFormat
) -> str:
    if fmt is SizeFormat.json:
        return sizing.model_dump_json(indent=2) + "\n"
    from gpuadvisor.decision.sizing import TERM_LABELS
    from gpuadvisor.vocabulary import format_value

    if estimate is None:
        need = format_value(sizing.vram_need_gib)
        return (
            f"vram_need_gib = {need} GiB, stated in the profile; it describes no model "
            "([workload.model]), so there is no breakdown.\n"
        )
    lines = [sizing.model, ""]
    for key, value in sizing.breakdown.items():
        shown = "not estimated" if key in estimate.missing else f"{value:>10,.2f} GiB"
        lines.append(f"  {TERM_LABELS[key]:<18} {shown:>14}")
    total = "at least" if not estimate.complete else "total"
    lines.append(f"  {total:<18} {estimate.total_gib:>10,.2f} GiB")
    lines += ["", f"  {sizing.formula}"]
    if sizing.source == "stated":
        lines.append(
            f"  The profile states {format_value(sizing.vram_need_gib)} GiB; advise uses that."
        )
    if speeds:
        lines += ["", "Speed bounds (one instance on one card):"]
        for card, bound in speeds:
            lines.append(
                f"  {card}: at best {bound.decode_ms_per_token:,.1f} ms per token "
                f"({bound.decode_tokens_per_s:,.0f} tokens/s per sequence), a prompt of "
                f"{bound.prompt_tokens:,} tokens in at least {bound.prefill_s:,.2f} s"
            )
    lines += ["", "Assumptions:"]
    lines += [f"  - {line}" for line in sizing.assumptions]
    return "\n".join(lines) + "\n"


def _model_list() -> str:
    from gpuadvisor.sizing.tables import model_table

    lines = [f"{'name':18} {'params':>8} {'active':>7} {'layers':>6} {'KV heads':>8}  model"]
    for entry in model_table().model:
        active = f"{entry.active_params_b:g}" if entry.active_params_b else ""
        lines.append(
            f"{entry.name:18} {entry.params_b:>7g}B {active:>7} {entry.layers:>6} "
            f"{entry.kv_heads:>8}  {entry.label}"
        )
    return "\n".join(lines) + "\n"
