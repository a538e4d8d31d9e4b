"""The sentences of the sizing breakdown that go beyond the six terms: what a config.json
left to its architecture's defaults, a sliding window's smaller KV cache, a diffusion
model's activations, and a need that cannot be known from the description (with the
refusal ``advise`` gives then). Phrased from :mod:`gpuadvisor.sizing`, which computes."""

from __future__ import annotations

from pathlib import Path

from gpuadvisor.errors import InputError
from gpuadvisor.sizing.estimate import GIB, MemoryEstimate
from gpuadvisor.sizing.tables import constants, layouts
from gpuadvisor.vocabulary import format_value

#: What each key that can fill a missing term is, for the message that asks for it.
_KEYS = {"resolution": "the image size in pixels, its side or [width, height]"}


def _gib(value: float) -> str:
    return format_value(round(value / GIB, 1))


def defaults_note(estimate: MemoryEstimate) -> str | None:
    """Keys the config.json leaves out and the defaults of its model_type they took."""
    arch = estimate.facts.arch
    if arch is None or not arch.defaulted or estimate.facts.arch_source != "hf_config":
        return None
    layout = layouts().model_type.get(arch.model_type)
    if layout is None:
        return None
    pairs = ", ".join(f"{key} = {str(layout.defaults[key]).lower()}" for key in arch.defaulted)
    return (
        f"Keys {Path(estimate.facts.arch_reference).name} leaves out take the defaults of "
        f"transformers' {layout.config_class}, as transformers does when it loads the "
        f"file: {pairs}."
    )


def window_note(estimate: MemoryEstimate) -> str | None:
    """The whole-context KV cache is the estimate; a windowed one is offered beside it."""
    arch = estimate.facts.arch
    windowed = estimate.kv_cache_windowed_bytes
    if arch is None or windowed is None:
        return None
    layers = (
        "every layer attends"
        if arch.sliding_layers == arch.layers
        else f"{arch.sliding_layers} of its {arch.layers} layers attend"
    )
    total = estimate.total_bytes - estimate.kv_cache_bytes + windowed
    return (
        f"Sliding window: {layers} only to the last "
        f"{format_value(arch.sliding_window)} tokens. The KV cache above assumes a server "
        "that keeps every token of the context in every layer (vLLM without its hybrid "
        f"KV-cache manager does: {constants().kv_cache.window_source}); one that frees "
        f"what falls out of the window needs {_gib(windowed)} GiB of KV cache instead of "
        f"{_gib(estimate.kv_cache_bytes)}, about {_gib(total)} GiB in all."
    )


def diffusion_note(estimate: MemoryEstimate) -> str | None:
    images = estimate.diffusion
    if images is None:
        return None
    table = constants().diffusion
    size = estimate.model.resolution
    sides = [size, size] if isinstance(size, int) else (size or [0, 0])
    shape = f"{sides[0]} × {sides[1]}"
    plural = "s" if images.images != 1 else ""
    decoded = (
        "them one at a time with VAE slicing"
        if estimate.model.vae_slicing and images.images > 1
        else f"{format_value(images.vae_images)} image{'s' if images.vae_images != 1 else ''} "
        "at once"
    )
    peak = "the UNet's" if images.peak == "unet" else "the VAE's"
    return (
        f"Activations: {format_value(images.images)} image{plural} of {shape} pixels per "
        f"batch; the peak is the larger of the UNet's working set while it denoises them "
        f"({_gib(images.unet_bytes)} GiB) and the VAE's while it decodes {decoded} "
        f"({_gib(images.vae_bytes)} GiB): {peak}. "
        f"{format_value(table.unet_bytes_per_pixel)} and "
        f"{format_value(table.vae_decode_bytes_per_pixel)} bytes per pixel of 16-bit "
        "values (32 bits for an fp32 pipeline, and for the VAE of an fp16 one, which "
        "diffusers upcasts), calibrated on Hugging Face's SDXL measurements with "
        f"PyTorch's SDPA attention ({table.source}); a pipeline built otherwise (a "
        "transformer instead of a UNet, as in SD3 or FLUX) can differ: measure it."
    )


def _missing_reason(estimate: MemoryEstimate) -> str:
    model = estimate.model
    if estimate.missing_keys:
        return "a diffusion model's activations grow with the image size, which it does not give"
    if model.family == "diffusion":
        return "gpuadvisor has no activation model for training a diffusion model"
    return f"gpuadvisor has no activation model for a {model.family} model"


def _asks(estimate: MemoryEstimate) -> str:
    keys = [f"workload.model.{key} ({_KEYS.get(key, key)})" for key in estimate.missing_keys]
    measured = (
        "the measured peak as workload.vram_need_gib (torch.cuda.max_memory_allocated of "
        "a real run, in GiB)"
    )
    return " or ".join([*keys, measured])


def missing_note(estimate: MemoryEstimate) -> str | None:
    """First among the assumptions when a term is left out: the need is unknown."""
    if estimate.complete:
        return None
    terms = ", ".join(term.removesuffix("_gib") for term in estimate.missing)
    why = _missing_reason(estimate)
    return (
        f"The memory need is unknown: the estimate leaves out {terms} ({why}), "
        f"so its {_gib(estimate.total_bytes)} GiB is a lower bound, not the need. "
        f"Give {_asks(estimate)}."
    )


def require_complete(estimate: MemoryEstimate | None, *, stated: float | None, file: str) -> None:
    """``advise`` sizes cards from a need it knows: an estimate that leaves out a term is
    refused (exit 2) unless the profile states the measured peak."""
    if estimate is None or estimate.complete or stated is not None:
        return
    terms = ", ".join(term.removesuffix("_gib") for term in estimate.missing)
    key = estimate.missing_keys[0] if estimate.missing_keys else None
    raise InputError(
        f"the memory one job needs is unknown: the estimate of [workload.model] leaves out "
        f"{terms} ({_missing_reason(estimate)}) and would size a card from "
        f"{_gib(estimate.total_bytes)} GiB",
        file=file,
        field=f"workload.model.{key}" if key else "workload.vram_need_gib",
        hint=f"give {_asks(estimate)}; `gpuadvisor size` shows the partial breakdown",
    )
