"""The decision's ``sizing`` object and the speed of each pick, phrased from the estimate
of :mod:`gpuadvisor.sizing` (which computes and writes nothing): the model in one line,
the breakdown as one sum, every assumption the numbers rest on, and the speed bounds."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gpuadvisor.decision.model import PickSpeed, Sizing
from gpuadvisor.decision.sizing_notes import (
    defaults_note,
    diffusion_note,
    missing_note,
    window_note,
)
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.facts import FactSet
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.suitability import speed_cards
from gpuadvisor.inputs.profile import Profile
from gpuadvisor.sizing.estimate import GIB, MemoryEstimate, estimate_memory
from gpuadvisor.sizing.speed import bytes_per_step, speed_on
from gpuadvisor.sizing.tables import constants
from gpuadvisor.vocabulary import ADAPTER_TASKS, format_value

TERM_LABELS: dict[str, str] = {
    "weights_gib": "weights",
    "kv_cache_gib": "KV cache",
    "activations_gib": "activations",
    "gradients_gib": "gradients",
    "optimizer_gib": "optimizer states",
    "overhead_gib": "overhead",
}
STATE_LABELS: dict[str, str] = {
    "mixed_precision_adam": "mixed-precision Adam (ZeRO)",
    "fp32_adam": "FP32 Adam",
    "qlora_adapters": "QLoRA's bf16 adapters with paged 32-bit AdamW",
    "mixed_precision_adam_8bit": "mixed-precision 8-bit Adam",
    "fp32_adam_8bit": "FP32 weights with 8-bit Adam",
    "qlora_adapters_8bit": "QLoRA's bf16 adapters with 8-bit AdamW",
}


def _b(count: float) -> str:
    """A parameter count in billions, as a person writes it (70.6 B, 0.21 B)."""
    billions = count / 1e9
    digits = 2 if billions < 10 else 1
    return f"{format_value(round(billions, digits))} B"


def _gib(value: float) -> str:
    return format_value(round(value, 1))


def _tokens(count: int) -> str:
    return format_value(count)


def describe_model(estimate: MemoryEstimate) -> str:
    """The model in one line: what it is, its weights, the task, the sequences."""
    model, facts = estimate.model, estimate.facts
    what = facts.label or f"a {_b(facts.params)}-parameter {model.family} model"
    if not facts.label and model.family == "llm":
        what = f"a {_b(facts.params)}-parameter language model"
    if not facts.label and facts.arch_source == "hf_config":
        what = f"the model of {Path(facts.arch_reference).name} ({_b(facts.params)} parameters)"
    precision = "NF4 (4-bit)" if estimate.precision == "nf4" else estimate.precision
    parts = [what, f"{precision} weights", model.task]
    if estimate.lora_rank is not None:
        parts[-1] += f" (rank {estimate.lora_rank})"
    if estimate.task_assumed:
        parts[-1] += ", assumed: the training method is not decided"
    if model.family == "llm":
        if model.task == "inference":
            plural = "s" if model.concurrent_sequences != 1 else ""
            parts.append(
                f"{_tokens(model.context_tokens)} tokens × "
                f"{format_value(model.concurrent_sequences)} sequence{plural}"
            )
        else:
            parts.append(
                f"{_tokens(model.context_tokens)} tokens × batch {format_value(model.batch)}"
            )
    images = estimate.diffusion
    if images is not None:
        size = model.resolution
        sides = [size, size] if isinstance(size, int) else (size or [0, 0])
        plural = "s" if images.images != 1 else ""
        parts.append(f"{format_value(images.images)} image{plural} of {sides[0]} × {sides[1]}")
    if estimate.checkpointing is not None:
        parts.append(f"activation checkpointing {'on' if estimate.checkpointing else 'off'}")
    return ", ".join(parts)


def formula(estimate: MemoryEstimate) -> str:
    """``weights 35.0 GiB + KV cache 2.5 + overhead 3.7 = 41.2 GiB`` (zero terms left out)."""
    terms = [(k, v) for k, v in estimate.breakdown_gib().items() if round(v, 1) > 0]
    shown = [
        f"{TERM_LABELS[key]} {value:,.1f}{' GiB' if index == 0 else ''}"
        for index, (key, value) in enumerate(terms)
    ]
    if not estimate.complete:
        left_out = ", ".join(TERM_LABELS[key] for key in estimate.missing)
        return (
            " + ".join(shown)
            + f" = at least {estimate.total_gib:,.1f} GiB ({left_out} not estimated)"
        )
    return " + ".join(shown) + f" = {estimate.total_gib:,.1f} GiB"


def _architecture(estimate: MemoryEstimate) -> str:
    facts, model = estimate.facts, estimate.model
    arch = facts.arch
    if facts.arch_source == "table":
        return (
            f"Architecture and parameter count ({_b(facts.params)}) of {facts.label} from "
            f"gpuadvisor's model table, after its published config.json ({facts.arch_reference})."
        )
    if facts.arch_source == "hf_config" and arch is not None:
        counted = "stated in the profile" if facts.params_source == "stated" else "counted from it"
        return (
            f"Architecture read from {facts.arch_reference}: {arch.layers} layers, hidden size "
            f"{arch.hidden}, {arch.kv_heads} KV heads of {arch.head_dim}; parameters "
            f"{counted}: {_b(facts.params)}."
        )
    if facts.arch_source == "nearest":
        return (
            "No architecture was given: the KV cache, the embeddings and the activations are "
            f"sized as for {facts.arch_reference}, the table model nearest to "
            f"{_b(facts.params)} parameters; name the model or give hf_config for its own."
        )
    if estimate.diffusion is not None:
        return (
            f"A diffusion model: weights from its {_b(facts.params)} parameters, "
            "activations from the image size and the images per batch (below)."
        )
    return (
        f"A {model.family} model: weights and training states from its {_b(facts.params)} "
        "parameters; there is no architecture for a KV cache."
    )


def _weights(estimate: MemoryEstimate) -> str:
    table = constants()
    facts = estimate.facts
    layout = table.weights[estimate.precision].layout
    why = {
        "stated": "",
        "task": " (qlora's 4-bit base)" if estimate.precision == "nf4" else " (not stated: bf16)",
        "native": f" (not stated: the model's native {estimate.precision})",
    }[estimate.precision_source]
    text = (
        f"Weights: {_b(facts.params)} parameters at {format_value(estimate.weight_bits)} bits"
        f"{why}: {layout}"
    )
    if estimate.embeddings_16bit and facts.arch is not None:
        text += (
            f"; the token embedding and output head ({_b(facts.arch.embedding_params)}) stay in "
            "16 bits"
        )
    if estimate.model.task in ("full-finetune", "pretrain"):
        text = f"Weights: {_b(facts.params)} parameters, stored as the training states below"
    return text + "."


def _kv(estimate: MemoryEstimate) -> str | None:
    arch = estimate.facts.arch
    if arch is None or estimate.kv_precision is None:
        return None
    model = estimate.model
    width = format_value(estimate.kv_bytes_per_token / arch.kv_values_per_token)
    if arch.latent_attention:
        shape = f"{arch.layers} layers × ({arch.kv_lora_rank} + {arch.rope_head_dim}) latent values"
    else:
        shape = f"2 × {arch.layers} layers × {arch.kv_heads} KV heads × {arch.head_dim}"
    per_token = format_value(round(estimate.kv_bytes_per_token / 1024, 1))
    plural = "s" if model.concurrent_sequences != 1 else ""
    return (
        f"KV cache: {shape} × {width} bytes ({estimate.kv_precision}) = {per_token} KiB per "
        f"token, × {_tokens(model.context_tokens)} tokens × "
        f"{format_value(model.concurrent_sequences)} sequence{plural} in flight."
    )


def _training(estimate: MemoryEstimate) -> list[str]:
    if estimate.states is None:
        return []
    table = constants()
    states = table.training[estimate.states]
    lines = []
    if estimate.model.task in ADAPTER_TASKS:
        assert estimate.lora_rank is not None
        where = "every linear layer" if estimate.facts.arch is not None else "the model"
        share = (
            f", taken as {table.lora.share_without_architecture:.0%} of the parameters"
            if estimate.facts.arch is None
            else ""
        )
        lines.append(
            f"LoRA adapters of rank {estimate.lora_rank} on {where}: "
            f"{_b(estimate.trainable_params)} trained parameters{share}; the base is frozen "
            "(no gradients or optimizer states for it)."
        )
    lines.append(
        f"Training states, {STATE_LABELS[estimate.states]}: "
        f"{format_value(states.weights_bytes)} + {format_value(states.gradients_bytes)} + "
        f"{format_value(states.optimizer_bytes)} bytes (weights, gradients, optimizer) per "
        f"trained parameter ({states.source})."
    )
    return lines


def _activations(estimate: MemoryEstimate) -> str | None:
    if not estimate.activations_estimated or estimate.facts.arch is None:
        return None
    acts = constants().activations
    if estimate.model.task == "inference":
        return (
            "Activations: one layer's working tensors for a prefill chunk of up to "
            f"{_tokens(acts.inference.prefill_chunk_tokens)} tokens (an assumed server "
            "setting), and each sequence's last logits."
        )
    full = format_value(acts.bytes_per_token_hidden)
    kept = (
        f"{format_value(acts.checkpointed_bytes_per_token_hidden)} bytes per token and hidden "
        f"unit for each layer's input (activation checkpointing), and {full} for the one "
        "layer being recomputed"
        if estimate.checkpointing
        else f"{full} bytes per token and hidden unit in every layer"
    )
    return (
        f"Activations: {kept}, with FlashAttention-style kernels ({acts.source}); plus the "
        f"logits, {format_value(estimate.facts.arch.vocab)} values per token at "
        f"{format_value(acts.logits.bytes_per_value)} bytes."
    )


def _overhead() -> str:
    overhead = constants().overhead
    return (
        f"Overhead: {format_value(overhead.cuda_context_gib)} GiB for the CUDA context and "
        f"libraries, plus {overhead.allocator_share:.0%} of the tensors for allocator "
        f"fragmentation and buffers ({overhead.allocator_source})."
    )


def _moe(estimate: MemoryEstimate) -> str | None:
    facts = estimate.facts
    if facts.active_params >= facts.params:
        return None
    return (
        f"Mixture of experts: all {_b(facts.params)} parameters stay in memory; "
        f"{_b(facts.active_params)} are used for each token (speed)."
    )


def speed_assumption(estimate: MemoryEstimate) -> str | None:
    step = bytes_per_step(estimate)
    if step is None:
        return None
    speed = constants().speed
    return (
        "Speed per pick is a bound, not a forecast: decoding a token takes at least the "
        f"bytes one step reads ({_gib(step / GIB)} GiB: the active weights and every "
        "sequence's KV cache at full context) over the card's memory bandwidth; prefill at "
        f"least {format_value(speed.flops_per_param_per_token)} FLOPs per active parameter "
        f"per token plus attention ({speed.source}) over its dense FP16 tensor rate (twice "
        "that for an FP8 model on cards with FP8 tensor cores). A model "
        "split over cards is counted at their summed bandwidth and compute, communication "
        "left out; real servers reach a part of these bounds."
    )


#: Tasks as a person writes them.
_TASK_WORDS = {"lora": "LoRA", "qlora": "QLoRA"}


def _assumed_task(estimate: MemoryEstimate) -> str | None:
    """What an "unknown" training method was sized as, and what a full fine-tune (every
    weight trained) would need instead: the question the answer turns on."""
    if not estimate.task_assumed:
        return None
    model = estimate.model
    full = estimate_memory(
        model.model_copy(update={"task": "full-finetune", "precision": None}),
        estimate.facts.arch if model.hf_config is not None else None,
        estimate.facts.arch_reference,
    )
    return (
        "The training method is not decided (task = unknown), so the job is sized as "
        f"{_TASK_WORDS.get(model.task, model.task)}: adapters trained beside the frozen "
        "model, which is how most fine-tuning of a published model is done. A full "
        "fine-tune of every weight would "
        f"need about {_gib(full.total_gib)} GiB instead; state the task to settle it."
    )


def assumptions(estimate: MemoryEstimate) -> tuple[str, ...]:
    lines: list[str | None] = [
        _assumed_task(estimate),
        missing_note(estimate),
        _architecture(estimate),
        defaults_note(estimate),
        _weights(estimate),
        _moe(estimate),
        _kv(estimate),
        window_note(estimate),
        *_training(estimate),
        diffusion_note(estimate) or _activations(estimate),
        _overhead(),
        "The estimate is for one job or model instance: each of concurrent_jobs needs as "
        "much, and splitting a model over cards adds the sharding overhead of the options.",
        speed_assumption(estimate),
    ]
    return tuple(line for line in lines if line)


def sizing_of(profile: Profile, facts: FactSet) -> Sizing:
    """The decision's ``sizing`` object: what the engine used, and from where."""
    need = facts.values.get("workload.vram_need_gib")
    used = float(need) if isinstance(need, (int, float)) and not isinstance(need, bool) else None
    return sizing_object(facts.sizing, stated=profile.workload.vram_need_gib, used=used)


def sizing_object(
    estimate: MemoryEstimate | None, *, stated: float | None, used: float | None
) -> Sizing:
    """``sizing`` (CONTRACT §6) for a stated need, an estimate, or both (the stated wins)."""
    if estimate is None:
        return Sizing(vram_need_gib=stated if used is None else used, source="stated", breakdown={})
    derived = round(estimate.total_gib, 2)
    notes = list(assumptions(estimate))
    if stated is not None:
        notes = [note for note in notes if note != missing_note(estimate)]
        compared = (
            f"the model's estimate is {format_value(derived)} GiB ({_difference(stated, derived)})"
            if estimate.complete
            else f"the model's estimate leaves a term out (at least {format_value(derived)} GiB)"
        )
        notes.insert(
            0,
            f"The profile states vram_need_gib = {format_value(stated)} GiB, which the "
            f"decision uses; {compared}.",
        )
    # An estimate that leaves a term out is no need: it is shown, never used.
    known = derived if estimate.complete else None
    return Sizing(
        vram_need_gib=used if used is not None else (stated if stated is not None else known),
        source="stated" if stated is not None else "derived",
        breakdown={key: round(value, 2) for key, value in estimate.breakdown_gib().items()},
        assumptions=tuple(notes),
        estimate_gib=known,
        model=describe_model(estimate),
        formula=formula(estimate),
    )


def _difference(stated: float, derived: float) -> str:
    share = stated / derived - 1
    if abs(share) < 0.005:
        return "the same"
    return f"the stated figure is {abs(share):.0%} {'above' if share > 0 else 'below'} it"


# -- speed of each pick ----------------------------------------------------------------


def option_speed(
    estimate: MemoryEstimate | None, option: Option, facts: Mapping[str, Value]
) -> PickSpeed | None:
    """Speed bounds of one model instance on this option: one card for a single card or
    for independent jobs (one instance per card), all of them for a model split."""
    if estimate is None:
        return None
    slo = facts.get("workload.latency_slo_ms")
    bound = speed_on(
        estimate,
        # One model instance runs on one GPU of a board of several.
        bandwidth_gbs=option.sku.gpu_bandwidth_gbs,
        fp16_tflops=option.sku.fp16_tensor_tflops / option.sku.gpus_per_board,
        cards=speed_cards(option),
        latency_slo_ms=float(slo) if isinstance(slo, (int, float)) else None,
        architecture=option.sku.architecture,
    )
    if bound is None:
        return None
    return PickSpeed(
        cards=bound.cards,
        sequences=bound.sequences,
        prompt_tokens=bound.prompt_tokens,
        decode_ms_per_token=round(bound.decode_ms_per_token, 2),
        decode_tokens_per_s=round(bound.decode_tokens_per_s, 1),
        decode_tokens_per_s_total=round(bound.decode_tokens_per_s_total, 1),
        prefill_s=round(bound.prefill_s, 3),
        answer_tokens_within_slo=bound.answer_tokens_within_slo,
    )


def speed_sentence(speed: PickSpeed, facts: Mapping[str, Value]) -> str:
    """What a pick's speed bounds mean for one answer, in a sentence."""
    ms = format_value(round(speed.decode_ms_per_token, 1))
    per_sequence = format_value(round(speed.decode_tokens_per_s))
    text = f" Decoding at best {ms} ms per token ({per_sequence} tokens/s per sequence"
    if speed.sequences > 1:
        text += (
            f", {format_value(round(speed.decode_tokens_per_s_total))} over "
            f"{speed.sequences} sequences"
        )
    text += (
        f"); reading a prompt of {_tokens(speed.prompt_tokens)} tokens takes at least "
        f"{format_value(round(speed.prefill_s, 2))} s."
    )
    within = speed.answer_tokens_within_slo
    if within is not None:
        target = format_value(facts.get("workload.latency_slo_ms"))
        if within == 0:
            text += f" A full-length prompt alone takes longer than the {target} ms target."
        else:
            tokens = "answer token" if within == 1 else "answer tokens"
            text += (
                f" Within the {target} ms target that leaves at most {format_value(within)} "
                f"{tokens} after a full-length prompt."
            )
    return text
