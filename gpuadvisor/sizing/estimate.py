"""The memory one job needs, term by term, from the model a profile describes.

``weights + KV cache + activations + gradients + optimizer states + overhead``, each
from the model's architecture and the constants in ``data/constants.toml`` (where every
number has its source). Pure functions: the architecture is resolved before (from a
local config.json, the model table, or the table model nearest in size), and no text
is written here; :mod:`gpuadvisor.decision.sizing` phrases what this computes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.workload_model import Model
from gpuadvisor.sizing.arch import Architecture
from gpuadvisor.sizing.diffusion import DiffusionActivations, diffusion_activations
from gpuadvisor.sizing.tables import ModelEntry, constants, find_model, model_table
from gpuadvisor.vocabulary import ADAPTER_TASKS, FULL_TRAINING_TASKS

GIB = float(2**30)

ArchSource = Literal["hf_config", "table", "nearest", "none"]

#: A stated params_b further than this from the named model's count is a contradiction.
PARAMS_AGREEMENT = 0.05
#: Formats whose checkpoints keep the embedding and output head in 16 bits.
QUANTISED = ("fp8", "int8", "int4", "nf4")
_KV_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}
#: How a training job whose method is not decided yet (task "unknown") is sized: LoRA,
#: what most fine-tuning of a published model uses (a full fine-tune of a 13B model
#: needs about 239 GiB). The decision says it was assumed.
UNKNOWN_TASK_READ_AS: Literal["lora"] = "lora"


@dataclass(frozen=True)
class ModelFacts:
    """What is known about the model once its description is resolved."""

    label: str
    """The table's name for it ("Llama 3.1 70B"), or empty when it has none."""
    arch: Architecture | None
    arch_source: ArchSource
    arch_reference: str
    """The config.json file read, the table entry's config URL, or the nearest model's label."""
    params: float
    active_params: float
    params_source: Literal["stated", "table", "hf_config"]
    native_precision: str = "bf16"


@dataclass(frozen=True)
class MemoryEstimate:
    """The peak memory of one job or model instance, in bytes per term, and every choice
    made on the way (for the report's assumptions)."""

    model: Model
    facts: ModelFacts
    precision: str
    """Weights format actually assumed: a profile precision, or ``nf4`` for qlora."""
    precision_source: Literal["stated", "task", "native"]
    weight_bits: float
    embeddings_16bit: bool
    kv_precision: str | None
    kv_bytes_per_token: float
    """KV cache of one token of one sequence, all layers (0 when there is none)."""
    trainable_params: float
    lora_rank: int | None
    states: str | None
    """Training-state layout (a ``[training.*]`` constant), None for inference."""
    checkpointing: bool | None
    activations_estimated: bool
    weights_bytes: float
    kv_cache_bytes: float
    activations_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    overhead_bytes: float
    kv_cache_windowed_bytes: float | None = None
    """The KV cache when the sliding-window layers keep only their window (None: no
    window, or the context fits in it)."""
    diffusion: DiffusionActivations | None = None
    missing: tuple[str, ...] = ()
    """Terms of the breakdown that could not be computed (``activations_gib``): the
    total is then a lower bound, not the need."""
    missing_keys: tuple[str, ...] = ()
    """``[workload.model]`` keys that would let them be computed (none: measure a run)."""

    task_assumed: bool = False
    """The profile's task was "unknown": ``model.task`` is what was assumed instead."""
    optimizer_8bit: bool = False
    """Optimizer states kept in 8 bits (a what-would-change lever; no profile states it)."""

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def total_bytes(self) -> float:
        return (
            self.weights_bytes
            + self.kv_cache_bytes
            + self.activations_bytes
            + self.gradients_bytes
            + self.optimizer_bytes
            + self.overhead_bytes
        )

    @property
    def total_gib(self) -> float:
        return self.total_bytes / GIB

    def breakdown_gib(self) -> dict[str, float]:
        """The six terms of CONTRACT §6's ``sizing.breakdown``, in GiB."""
        return {
            "weights_gib": self.weights_bytes / GIB,
            "kv_cache_gib": self.kv_cache_bytes / GIB,
            "activations_gib": self.activations_bytes / GIB,
            "gradients_gib": self.gradients_bytes / GIB,
            "optimizer_gib": self.optimizer_bytes / GIB,
            "overhead_gib": self.overhead_bytes / GIB,
        }

    @property
    def llm_inference(self) -> bool:
        return self.model.family == "llm" and self.model.task == "inference"


# -- resolving the description ---------------------------------------------------------


def _nearest_dense(params_b: float) -> ModelEntry:
    dense = [e for e in model_table().model if not e.experts]
    return min(dense, key=lambda e: (abs(math.log(params_b / e.params_b)), e.name))


def resolve(
    model: Model, config_arch: Architecture | None = None, config_file: str = ""
) -> ModelFacts:
    """Architecture and parameter counts: from the config.json read for ``hf_config``
    (``config_arch``), else the named table entry, else the table model nearest in size."""
    stated = model.params_b * 1e9 if model.params_b is not None else None
    stated_active = model.active_params_b * 1e9 if model.active_params_b is not None else None
    if model.hf_config is not None:
        if config_arch is None:
            raise ValueError("hf_config is set: read it first (gpuadvisor.sizing.size_model)")
        params = stated if stated is not None else float(config_arch.total_params)
        share = config_arch.active_params / config_arch.total_params
        entry = find_model(model.name) if model.name else None
        return ModelFacts(
            label=entry.label if entry else "",
            arch=config_arch,
            arch_source="hf_config",
            arch_reference=config_file,
            params=params,
            active_params=stated_active if stated_active is not None else params * share,
            params_source="stated" if stated is not None else "hf_config",
            native_precision=entry.native_precision if entry else "bf16",
        )
    if model.name is not None:
        entry = find_model(model.name)
        if entry is None:
            raise InputError(
                f"no model named {model.name!r} in gpuadvisor's table",
                field="workload.model.name",
                hint=did_you_mean(model.name, [e.name for e in model_table().model])
                or "`gpuadvisor size --list-models` lists them; or give params_b (and hf_config)",
            )
        table_params = entry.params_b * 1e9
        if stated is not None and abs(stated / table_params - 1) > PARAMS_AGREEMENT:
            raise InputError(
                f"params_b = {model.params_b:g} disagrees with {entry.label} "
                f"({entry.params_b:g} billion parameters)",
                field="workload.model.params_b",
                hint="leave params_b out to use the table's count, or fix the name",
            )
        active = entry.active_params_b * 1e9 if entry.active_params_b else table_params
        return ModelFacts(
            label=entry.label,
            arch=Architecture.of_entry(entry),
            arch_source="table",
            arch_reference=entry.config,
            params=table_params,
            active_params=active,
            params_source="table",
            native_precision=entry.native_precision,
        )
    assert stated is not None, "the profile model requires params_b without name or hf_config"
    active = stated_active if stated_active is not None else stated
    if model.family != "llm":
        return ModelFacts("", None, "none", "", stated, active, "stated")
    near = _nearest_dense(stated / 1e9)
    return ModelFacts(
        label="",
        arch=Architecture.of_entry(near),
        arch_source="nearest",
        arch_reference=near.label,
        params=stated,
        active_params=active,
        params_source="stated",
    )


# -- the terms ---------------------------------------------------------------------------


def _precision(model: Model, facts: ModelFacts) -> tuple[str, Literal["stated", "task", "native"]]:
    if model.task == "qlora":
        return "nf4", "task" if model.precision is None else "stated"
    if model.precision is not None:
        return model.precision, "stated"
    if model.task == "inference" and facts.native_precision != "bf16":
        return facts.native_precision, "native"
    return "bf16", "task"


def _states(model: Model, precision: str) -> str | None:
    """The ``[training.*]`` layout of the trained parameters' states, None for inference."""
    if model.task == "qlora":
        return "qlora_adapters"
    if model.task in FULL_TRAINING_TASKS or model.task in ADAPTER_TASKS:
        return "fp32_adam" if precision == "fp32" else "mixed_precision_adam"
    return None


def _trainable(model: Model, facts: ModelFacts, rank: int | None) -> float:
    if model.task in FULL_TRAINING_TASKS:
        return facts.params
    if rank is None:
        return 0.0
    if facts.arch is None:
        return facts.params * constants().lora.share_without_architecture
    return float(facts.arch.lora_params(rank))


def _activations(
    model: Model, arch: Architecture | None, checkpointing: bool, precision: str
) -> float | None:
    """Bytes of activations at the peak of a step, or None when not estimated."""
    if model.family == "diffusion" and model.task == "inference":
        images = diffusion_activations(model, precision)
        return images.peak_bytes if images is not None else None
    if model.family != "llm" or arch is None:
        return None
    acts = constants().activations
    if model.task == "inference":
        in_flight = model.context_tokens * model.concurrent_sequences
        chunk = min(acts.inference.prefill_chunk_tokens, in_flight)
        working = chunk * 2.0 * (4 * arch.hidden + 2 * arch.active_intermediate)
        return working + model.concurrent_sequences * arch.vocab * 4.0
    tokens_hidden = float(model.context_tokens) * model.batch * arch.hidden
    width = 2.0 if precision == "fp32" else 1.0  # the coefficients are for 16-bit values
    full = acts.bytes_per_token_hidden * tokens_hidden * width
    if checkpointing:
        kept = acts.checkpointed_bytes_per_token_hidden * tokens_hidden * width * arch.layers
        layers = kept + full  # inputs of every layer, and one layer while it is recomputed
    else:
        layers = full * arch.layers
    logits = float(model.context_tokens) * model.batch * arch.vocab * acts.logits.bytes_per_value
    return layers + logits


def estimate_memory(
    model: Model,
    config_arch: Architecture | None = None,
    config_file: str = "",
    *,
    optimizer_8bit: bool = False,
) -> MemoryEstimate:
    """Every term of the memory one job needs (see the module docstring); a task of
    "unknown" is sized as :data:`UNKNOWN_TASK_READ_AS`, and ``optimizer_8bit`` keeps a
    trained model's Adam moments in 8 bits (the ``*_8bit`` training states)."""
    assumed = model.task == "unknown"
    if assumed:
        model = model.model_copy(update={"task": UNKNOWN_TASK_READ_AS})
    facts = resolve(model, config_arch, config_file)
    _check_position_limit(model, facts)
    table = constants()
    precision, precision_source = _precision(model, facts)
    bits = table.weights[precision].bits_per_param
    embeddings_16bit = precision in QUANTISED and facts.arch is not None
    embedding = (
        min(facts.arch.embedding_params, facts.params / 2)
        if embeddings_16bit and (facts.arch is not None)
        else 0.0
    )
    base_weights = (facts.params - embedding) * bits / 8 + embedding * (
        table.embeddings.bits_per_param / 8
    )
    rank = None
    if model.task in ADAPTER_TASKS:
        rank = model.lora_rank or table.lora.default_rank
    state_name = _states(model, precision)
    if optimizer_8bit and state_name is not None:
        state_name += "_8bit"
    trainable = _trainable(model, facts, rank)
    gradients = optimizer = 0.0
    weights = base_weights
    if state_name is not None:
        states = table.training[state_name]
        if model.task in FULL_TRAINING_TASKS:
            weights = facts.params * states.weights_bytes
        else:
            weights += trainable * states.weights_bytes
        gradients = trainable * states.gradients_bytes
        optimizer = trainable * states.optimizer_bytes
    kv_precision: str | None = None
    kv_per_token = 0.0
    if model.family == "llm" and model.task == "inference" and facts.arch is not None:
        kv_precision = model.kv_cache_precision or ("fp32" if precision == "fp32" else "bf16")
        kv_per_token = facts.arch.kv_values_per_token * _KV_BYTES[kv_precision]
    kv_cache = kv_per_token * model.context_tokens * model.concurrent_sequences
    windowed = None
    arch = facts.arch
    if (
        kv_precision is not None
        and arch is not None
        and arch.sliding_layers
        and model.context_tokens > arch.sliding_window
    ):
        values = arch.kv_values_windowed(model.context_tokens)
        windowed = values * _KV_BYTES[kv_precision] * model.concurrent_sequences
    checkpointing = (
        None
        if model.task == "inference"
        else (
            model.activation_checkpointing
            if model.activation_checkpointing is not None
            else model.task == "qlora"
        )
    )
    activations = _activations(model, facts.arch, bool(checkpointing), precision)
    missing, missing_keys = _missing(model, activations)
    tensors = weights + kv_cache + (activations or 0.0) + gradients + optimizer
    overhead = table.overhead.cuda_context_gib * GIB + table.overhead.allocator_share * tensors
    return MemoryEstimate(
        model=model,
        facts=facts,
        precision=precision,
        precision_source=precision_source,
        weight_bits=bits,
        embeddings_16bit=embeddings_16bit,
        kv_precision=kv_precision,
        kv_bytes_per_token=kv_per_token,
        trainable_params=trainable,
        lora_rank=rank,
        states=state_name,
        checkpointing=checkpointing,
        activations_estimated=activations is not None,
        weights_bytes=weights,
        kv_cache_bytes=kv_cache,
        activations_bytes=activations or 0.0,
        gradients_bytes=gradients,
        optimizer_bytes=optimizer,
        overhead_bytes=overhead,
        kv_cache_windowed_bytes=windowed,
        diffusion=(
            diffusion_activations(model, precision)
            if model.family == "diffusion" and model.task == "inference"
            else None
        ),
        missing=missing,
        missing_keys=missing_keys,
        task_assumed=assumed,
        optimizer_8bit=optimizer_8bit and state_name is not None,
    )


def _missing(model: Model, activations: float | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The terms left out, and the keys that would give them: a diffusion model being
    served needs its image size; other models and trainings have no activation model."""
    if activations is not None:
        return (), ()
    if model.family == "diffusion" and model.task == "inference":
        return ("activations_gib",), ("resolution",)
    return ("activations_gib",), ()


def _check_position_limit(model: Model, facts: ModelFacts) -> None:
    """A sequence longer than the model's position limit cannot be run: an input error
    naming both numbers."""
    arch = facts.arch
    if model.family != "llm" or arch is None or not arch.max_positions:
        return
    if model.context_tokens <= arch.max_positions:
        return
    source = Path(facts.arch_reference).name if facts.arch_source == "hf_config" else facts.label
    raise InputError(
        f"context_tokens = {model.context_tokens:,} is beyond the model's position limit: "
        f"{arch.limit_key} = {arch.max_positions:,} ({source})",
        field="workload.model.context_tokens",
        hint=f"give at most {arch.max_positions:,} tokens per sequence (context_tokens, --context)",
    )
