"""The estimator's data: its constants and the table of model families, each value with
its source (``gpuadvisor/sizing/data/``), read and checked once per process.

The files ship inside the package; they are validated like any other input, so a
mistyped value fails with the file and the field, never with a wrong estimate.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuadvisor.errors import InternalError
from gpuadvisor.inputs.textio import parse_toml, read_text
from gpuadvisor.vocabulary import PRECISIONS, Precision

DATA = Path(__file__).resolve().parent / "data"

#: Weight formats the constants must define: every profile precision and QLoRA's NF4.
WEIGHT_FORMATS = (*PRECISIONS, "nf4")
TRAINING_STATES = ("mixed_precision_adam", "fp32_adam", "qlora_adapters")
#: Each layout again with 8-bit optimizer moments (``<layout>_8bit``).
TRAINING_STATES_8BIT = tuple(f"{name}_8bit" for name in TRAINING_STATES)


class _Data(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, strict=True)


class WeightFormat(_Data):
    bits_per_param: float = Field(gt=0, le=64)
    layout: str = Field(min_length=1)
    source: str = Field(pattern=r"^https://")


class Embeddings(_Data):
    bits_per_param: float = Field(gt=0, le=64)
    source: str = Field(pattern=r"^https://")


class StateBytes(_Data):
    """Bytes per trained parameter: its weights, its gradients, its optimizer states."""

    weights_bytes: float = Field(gt=0, le=64)
    gradients_bytes: float = Field(gt=0, le=64)
    optimizer_bytes: float = Field(ge=0, le=64)
    source: str = Field(pattern=r"^https://")

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.gradients_bytes + self.optimizer_bytes


class Lora(_Data):
    default_rank: int = Field(ge=1, le=65_536)
    source: str = Field(pattern=r"^https://")
    share_without_architecture: float = Field(gt=0, lt=1)


class Logits(_Data):
    bytes_per_value: float = Field(gt=0, le=64)
    source: str = Field(pattern=r"^https://")


class InferenceActivations(_Data):
    prefill_chunk_tokens: int = Field(ge=1, le=10_000_000)
    source: str = Field(pattern=r"^https://")


class Activations(_Data):
    bytes_per_token_hidden: float = Field(gt=0, le=1000)
    checkpointed_bytes_per_token_hidden: float = Field(gt=0, le=1000)
    source: str = Field(pattern=r"^https://")
    logits: Logits
    inference: InferenceActivations


class KvCache(_Data):
    """What a server keeps of a sliding-window model's KV cache (a statement, sourced)."""

    window_source: str = Field(pattern=r"^https://")


class Diffusion(_Data):
    """Peak activations of a latent-diffusion pipeline generating images (inference)."""

    unet_bytes_per_pixel: float = Field(gt=0, le=100_000)
    vae_decode_bytes_per_pixel: float = Field(gt=0, le=100_000)
    reference_bits: float = Field(gt=0, le=64)
    source: str = Field(pattern=r"^https://")


class Overhead(_Data):
    cuda_context_gib: float = Field(ge=0, le=64)
    cuda_context_source: str = Field(pattern=r"^https://")
    allocator_share: float = Field(ge=0, lt=1)
    allocator_source: str = Field(pattern=r"^https://")


class Speed(_Data):
    flops_per_param_per_token: float = Field(gt=0, le=100)
    source: str = Field(pattern=r"^https://")
    decode_source: str = Field(pattern=r"^https://")
    fp8_speedup: float = Field(1.0, ge=1, le=8)
    fp8_architectures: tuple[str, ...] = Field((), strict=False)
    fp8_source: str = Field("", pattern=r"^(https://.*)?$")


class Constants(_Data):
    schema_: Literal["gpuadvisor/sizing-constants/v1"] = Field(alias="schema")
    weights: dict[str, WeightFormat]
    embeddings: Embeddings
    training: dict[str, StateBytes]
    lora: Lora
    activations: Activations
    overhead: Overhead
    speed: Speed
    kv_cache: KvCache
    diffusion: Diffusion

    model_config = ConfigDict(populate_by_name=True)

    @model_validator(mode="after")
    def _complete(self) -> Constants:
        missing = [f for f in WEIGHT_FORMATS if f not in self.weights]
        missing += [
            f"training.{t}"
            for t in (*TRAINING_STATES, *TRAINING_STATES_8BIT)
            if t not in self.training
        ]
        if missing:
            raise ValueError(f"constants missing: {', '.join(missing)}")
        return self


class ModelEntry(_Data):
    """One model of the table: its published config.json numbers and parameter count."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")
    label: str = Field(min_length=1)
    aliases: tuple[str, ...] = Field((), strict=False)
    params_b: float = Field(gt=0, le=100_000)
    active_params_b: float | None = Field(None, gt=0, le=100_000)
    native_precision: Precision = "bf16"
    layers: int = Field(ge=1, le=1000)
    hidden: int = Field(ge=1, le=1_000_000)
    heads: int = Field(ge=1, le=100_000)
    kv_heads: int = Field(ge=1, le=100_000)
    head_dim: int = Field(ge=1, le=65_536)
    intermediate: int = Field(ge=1, le=10_000_000)
    vocab: int = Field(ge=1, le=100_000_000)
    tied_embeddings: bool
    gated_mlp: bool = True
    experts: int = Field(0, ge=0, le=100_000)
    experts_per_token: int = Field(0, ge=0, le=100_000)
    moe_intermediate: int = Field(0, ge=0, le=10_000_000)
    shared_experts: int = Field(0, ge=0, le=100_000)
    dense_layers: int = Field(0, ge=0, le=1000)
    kv_lora_rank: int = Field(0, ge=0, le=65_536)
    rope_head_dim: int = Field(0, ge=0, le=65_536)
    q_lora_rank: int = Field(0, ge=0, le=65_536)
    nope_head_dim: int = Field(0, ge=0, le=65_536)
    v_head_dim: int = Field(0, ge=0, le=65_536)
    sliding_window: int = Field(0, ge=0, le=100_000_000)
    sliding_layers: int = Field(0, ge=0, le=1000)
    config: str = Field(pattern=r"^https://")
    params_source: str = Field(pattern=r"^https://")

    @model_validator(mode="after")
    def _moe_complete(self) -> ModelEntry:
        if self.experts and not (self.experts_per_token and self.moe_intermediate):
            raise ValueError(f"{self.name}: experts needs experts_per_token and moe_intermediate")
        if self.experts and self.active_params_b is None:
            raise ValueError(f"{self.name}: a mixture-of-experts entry needs active_params_b")
        if (
            bool(self.sliding_window) != bool(self.sliding_layers)
            or self.sliding_layers > self.layers
        ):
            raise ValueError(f"{self.name}: sliding_window and sliding_layers go together")
        return self


class ModelTable(_Data):
    schema_: Literal["gpuadvisor/sizing-models/v1"] = Field(alias="schema")
    model: tuple[ModelEntry, ...] = Field(strict=False)

    model_config = ConfigDict(populate_by_name=True)

    @model_validator(mode="after")
    def _unique(self) -> ModelTable:
        seen: dict[str, str] = {}
        for entry in self.model:
            for key in (entry.name, *entry.aliases):
                normal = name_key(key)
                if seen.get(normal, entry.name) != entry.name:
                    raise ValueError(f"{key!r} names both {seen[normal]} and {entry.name}")
                seen[normal] = entry.name
        return self


BiasSwitch = bool | str


class Bias(_Data):
    qkv: BiasSwitch = False
    out: BiasSwitch = False
    mlp: BiasSwitch = False


class Layout(_Data):
    """How transformers builds one ``model_type`` (``data/architectures.toml``)."""

    config_class: str = Field(min_length=1)
    source: str = Field(pattern=r"^https://github\.com/huggingface/transformers/")
    norm: Literal["rms", "layer"] = "rms"
    norms_per_layer: int = Field(2, ge=1, le=8)
    mlp: Literal["gated", "plain"] = "gated"
    bias: Bias = Bias()
    learned_positions: bool = False
    position_offset: int = Field(0, ge=0, le=1024)
    sliding: Literal["all", "alternate", "none"] = "none"
    defaults: dict[str, int | bool] = Field(default_factory=dict, strict=False)

    @model_validator(mode="after")
    def _switches_are_defaulted(self) -> Layout:
        for part in ("qkv", "out", "mlp"):
            switch = getattr(self.bias, part)
            if isinstance(switch, str) and not isinstance(self.defaults.get(switch), bool):
                raise ValueError(f"{self.config_class}: bias.{part} = {switch!r} has no default")
        return self


class Layouts(_Data):
    schema_: Literal["gpuadvisor/sizing-architectures/v1"] = Field(alias="schema")
    transformers_version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    model_type: dict[str, Layout]

    model_config = ConfigDict(populate_by_name=True)


def name_key(name: str) -> str:
    """How a model name is matched: case, an ``org/`` prefix and the usual suffixes of
    fine-tuned variants (-instruct, -chat, -it, -hf, -base) do not matter."""
    key = name.strip().lower().rsplit("/", 1)[-1].replace("_", "-").replace(" ", "-")
    changed = True
    while changed:
        changed = False
        for suffix in ("-instruct", "-chat", "-it", "-hf", "-base"):
            if key.endswith(suffix) and len(key) > len(suffix):
                key = key[: -len(suffix)]
                changed = True
    return key


def _load(name: str, model: type[_Data]) -> Any:
    path = DATA / name
    data = parse_toml(read_text(path), str(path))
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InternalError(
            f"bundled sizing data is invalid: {first['msg']}", file=str(path), field=where or None
        ) from None


@functools.cache
def constants() -> Constants:
    """The estimator's constants (bundled, immutable: read once per process)."""
    loaded: Constants = _load("constants.toml", Constants)
    return loaded


@functools.cache
def model_table() -> ModelTable:
    """The documented table of model families (bundled, immutable: read once per process)."""
    loaded: ModelTable = _load("models.toml", ModelTable)
    return loaded


@functools.cache
def _by_key() -> dict[str, ModelEntry]:
    table: dict[str, ModelEntry] = {}
    for entry in model_table().model:
        for key in (entry.name, *entry.aliases):
            table[name_key(key)] = entry
    return table


@functools.cache
def layouts() -> Layouts:
    """How transformers builds each model_type it is given (bundled, read once)."""
    loaded: Layouts = _load("architectures.toml", Layouts)
    return loaded


def find_model(name: str) -> ModelEntry | None:
    """The table entry a name (or one of its aliases) refers to, or None."""
    return _by_key().get(name_key(name))


def model_names() -> tuple[str, ...]:
    return tuple(entry.name for entry in model_table().model)
