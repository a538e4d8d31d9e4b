"""How fast a language model can at best answer on a card: bounds, not forecasts.

Decoding produces one token per sequence per step, and each step reads every weight a
token passes through plus the KV cache of every sequence in flight: a step takes at
least (bytes read) / (memory bandwidth). Prefill (reading the prompt) is bounded by
compute: a forward pass costs about 2 FLOPs per parameter per token plus attention
(Kaplan et al. 2020), at the card's dense FP16 tensor rate. Real servers reach a part
of both bounds; what a card does not reach, no purchase decision should assume.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.sizing.estimate import MemoryEstimate
from gpuadvisor.sizing.tables import constants


@dataclass(frozen=True)
class SpeedBound:
    """Bounds for one model instance spread over ``cards`` cards."""

    cards: int
    sequences: int
    prompt_tokens: int
    bytes_per_step: float
    decode_ms_per_token: float
    """At least this long between two tokens of one sequence."""
    decode_tokens_per_s: float
    """At most this many tokens per second for one sequence."""
    decode_tokens_per_s_total: float
    """At most this many tokens per second over all sequences in flight."""
    prefill_s: float
    """At least this long to read one prompt as long as the whole context."""
    answer_tokens_within_slo: int | None = None
    """At most this many answer tokens fit in the latency target after a full-length
    prompt (0: the prompt alone takes longer); None without a target."""


def _experts_touched(experts: int, per_token: int, sequences: int) -> float:
    """Expected share of the routed experts a step over ``sequences`` tokens reads, when
    each token picks ``per_token`` of ``experts`` (uniform routing assumed)."""
    return 1.0 - (1.0 - per_token / experts) ** sequences


def bytes_per_step(estimate: MemoryEstimate) -> float | None:
    """Bytes one decode step reads, or None when this is not language-model serving."""
    arch = estimate.facts.arch
    if not estimate.llm_inference or arch is None:
        return None
    model = estimate.model
    weights = estimate.weights_bytes
    # The token embedding is looked up one row at a time; a tied one is also the output
    # head, which every step reads whole.
    embedding_bits = 16.0 if estimate.embeddings_16bit else estimate.weight_bits
    weights -= arch.input_embedding_params * embedding_bits / 8
    if arch.moe and estimate.facts.arch_source != "nearest":
        experts = float(arch.expert_params) * arch.experts * estimate.weight_bits / 8
        share = _experts_touched(arch.experts, arch.experts_per_token, model.concurrent_sequences)
        weights -= experts * (1.0 - share)
    elif estimate.facts.active_params < estimate.facts.params and model.concurrent_sequences == 1:
        # A stated mixture-of-experts size without its architecture: one sequence reads
        # the active share; several may touch every expert, so they are counted whole.
        weights *= estimate.facts.active_params / estimate.facts.params
    kv = estimate.kv_bytes_per_token * model.context_tokens * model.concurrent_sequences
    return weights + kv


@dataclass(frozen=True)
class SpeedInputs:
    """What a model instance's speed bounds depend on, card aside: the engine ranks cards
    against a latency target from these (as ``workload.*`` facts), the report phrases
    :func:`speed_on`'s bound from the same numbers."""

    bytes_per_step: float
    """Bytes one decode step reads (active weights and every sequence's KV cache)."""
    prefill_flops: float
    """FLOPs to read one prompt as long as the whole context."""
    prompt_tokens: int
    sequences: int
    fp8: bool
    """The model computes in FP8 (twice the FP16 rate on cards with FP8 tensor cores)."""


def speed_inputs(estimate: MemoryEstimate) -> SpeedInputs | None:
    """The card-independent part of the bounds, or None when this is not language-model
    serving."""
    step = bytes_per_step(estimate)
    arch = estimate.facts.arch
    if step is None or arch is None:
        return None
    model = estimate.model
    prompt = model.context_tokens
    per_token = constants().speed.flops_per_param_per_token * estimate.facts.active_params
    # Attention over a causal prompt: each token attends to half the prompt on average.
    per_token += 2.0 * arch.layers * (prompt / 2) * arch.q_dim
    return SpeedInputs(
        bytes_per_step=step,
        prefill_flops=per_token * prompt,
        prompt_tokens=prompt,
        sequences=model.concurrent_sequences,
        fp8=model.precision == "fp8",
    )


def compute_tflops(fp16_tflops: float, architecture: str, fp8: bool) -> float:
    """The dense tensor rate a prefill runs at: FP16, or FP8's on cards that have it."""
    speed = constants().speed
    if fp8 and architecture in speed.fp8_architectures:
        return fp16_tflops * speed.fp8_speedup  # FP8 tensor cores
    return fp16_tflops


def answer_tokens_within(latency_slo_ms: float, prefill_s: float, decode_s: float) -> int:
    """Answer tokens that fit in the target after a full-length prompt (0: the prompt
    alone takes longer)."""
    return max(0, int((latency_slo_ms / 1000 - prefill_s) / decode_s))


def speed_on(
    estimate: MemoryEstimate,
    *,
    bandwidth_gbs: float,
    fp16_tflops: float,
    cards: int = 1,
    latency_slo_ms: float | None = None,
    architecture: str = "",
) -> SpeedBound | None:
    """Decode and prefill bounds of one instance on ``cards`` cards of this kind.

    A model split over several cards is counted at their summed bandwidth and compute,
    with the communication between them left out: an upper bound on what splitting buys.
    An FP8 model on a card of ``architecture`` with FP8 tensor cores computes at the FP8
    rate (``fp8_speedup`` times the FP16 one, sizing constants).
    """
    inputs = speed_inputs(estimate)
    if inputs is None or bandwidth_gbs <= 0 or fp16_tflops <= 0:
        return None
    seconds = inputs.bytes_per_step / (bandwidth_gbs * 1e9 * cards)
    tflops = compute_tflops(fp16_tflops, architecture, inputs.fp8)
    prefill = inputs.prefill_flops / (tflops * 1e12 * cards)
    within = None
    if latency_slo_ms is not None:
        within = answer_tokens_within(latency_slo_ms, prefill, seconds)
    return SpeedBound(
        cards=cards,
        sequences=inputs.sequences,
        prompt_tokens=inputs.prompt_tokens,
        bytes_per_step=inputs.bytes_per_step,
        decode_ms_per_token=seconds * 1000.0,
        decode_tokens_per_s=1.0 / seconds,
        decode_tokens_per_s_total=inputs.sequences / seconds,
        prefill_s=prefill,
        answer_tokens_within_slo=within,
    )
