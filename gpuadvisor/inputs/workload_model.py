"""``[workload.model]``: the model one job runs, described instead of its memory.

A section of the workload profile (CONTRACT §6), kept in its own module. What is derived
from it (memory, speed) is :mod:`gpuadvisor.sizing`'s business; this module only checks
that a description is complete and consistent, naming the field when it is not.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from gpuadvisor.vocabulary import FULL_TRAINING_TASKS, ModelFamily, ModelTask, Precision


def field_error(loc: str, message: str, value: Any) -> ValidationError:
    """A validation error at one field of the model being validated, in our words."""
    return ValidationError.from_exception_data(
        "profile",
        [
            InitErrorDetails(
                type=PydanticCustomError("profile_combination", message),
                loc=(loc,),
                input=value,
            )
        ],
    )


def missing_error(loc: str, data: Any) -> ValidationError:
    return ValidationError.from_exception_data(
        "profile", [InitErrorDetails(type="missing", loc=(loc,), input=data)]
    )


def either_schema(field: str, *others: str) -> Any:
    """JSON Schema of a section where ``field`` may be left out when one of ``others`` is
    given (the validators fill it in as null then)."""

    def adjust(schema: dict[str, Any]) -> None:
        required = [name for name in schema.get("required", []) if name != field]
        if required:
            schema["required"] = required
        else:
            schema.pop("required", None)
        schema["anyOf"] = [{"required": [name]} for name in (field, *others)]

    return adjust


class Model(BaseModel):
    """``[workload.model]``: the model ONE job runs, described instead of guessing its
    memory (CONTRACT §6). ``gpuadvisor size`` shows what gpuadvisor derives from it;
    every constant it uses is documented with its source in gpuadvisor/sizing/data/."""

    # The profile's number policy (gpuadvisor.inputs.profile._Section): strict types, no
    # unknown keys, no inf/nan, defaults validated; a test holds the two equal.
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        allow_inf_nan=False,
        validate_default=True,
        strict=True,
        protected_namespaces=(),
        json_schema_extra=either_schema("params_b", "name", "hf_config"),
    )

    family: ModelFamily = Field(
        "llm", description="llm: language model; diffusion, vision, other: weights only."
    )
    name: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="A model of gpuadvisor's documented table (gpuadvisor size --list-models), "
        "such as llama-3.1-70b: its architecture and parameter count.",
    )
    params_b: float | None = Field(
        gt=0,
        le=100_000,
        description="Parameters, in billions (all experts, for mixture-of-experts); needed "
        "unless name or hf_config gives them.",
    )
    active_params_b: float | None = Field(
        None,
        gt=0,
        le=100_000,
        description="Mixture-of-experts: parameters used for each token, in billions (speed).",
    )
    precision: Precision | None = Field(
        None,
        description="Number format of the weights (int8 / int4: group-wise quantised); "
        "unset: bf16, or int4 for qlora.",
    )
    task: ModelTask = Field(
        "inference",
        description="inference, or training: full-finetune / pretrain (every weight), lora "
        "(adapters on a frozen base), qlora (adapters on a 4-bit base); unknown: training "
        "whose method is not decided yet, sized as lora (the report says so).",
    )
    context_tokens: int = Field(
        4096,
        ge=1,
        le=10_000_000,
        description="Tokens in one sequence: prompt and answer when serving, sample length "
        "when training (llm).",
    )
    batch: int = Field(
        1,
        ge=1,
        le=65_536,
        description="Samples per training step on one model instance (the micro-batch); "
        "for a diffusion model generating images, the images made at once. A language "
        "model being served takes concurrent_sequences instead.",
    )
    concurrent_sequences: int = Field(
        1,
        ge=1,
        le=65_536,
        description="LLM serving: sequences in flight on one instance, each with its own KV cache.",
    )
    hf_config: str | None = Field(
        None,
        min_length=1,
        max_length=1000,
        description="A Hugging Face config.json on this machine (path relative to this "
        "profile) with the real architecture; never fetched from the network.",
    )
    kv_cache_precision: Literal["fp32", "bf16", "fp16", "fp8", "int8"] | None = Field(
        None,
        description="Number format of the KV cache; unset: 16-bit (fp32 for fp32 weights).",
    )
    lora_rank: int | None = Field(
        None,
        ge=1,
        le=65_536,
        description="LoRA / QLoRA adapter rank r on every linear layer; unset: 16.",
    )
    resolution: int | list[int] | None = Field(
        None,
        description="Diffusion: the size of one image in pixels, its side (1024) or "
        "[width, height]; its activations grow with the pixels.",
    )
    vae_slicing: bool = Field(
        False,
        description="Diffusion: the VAE decodes the images one at a time "
        "(diffusers' enable_vae_slicing) instead of all at once.",
    )
    activation_checkpointing: bool | None = Field(
        None,
        description="Training recomputes activations in the backward pass (gradient "
        "checkpointing); unset: on for qlora, off otherwise.",
    )

    @model_validator(mode="before")
    @classmethod
    def _params_from_elsewhere(cls, data: Any) -> Any:
        # A named model or a config.json gives the parameter count: params_b may be
        # left out then (it stays a required key otherwise, so `ask` asks for it).
        if (
            isinstance(data, dict)
            and "params_b" not in data
            and (data.get("name") is not None or data.get("hf_config") is not None)
        ):
            return {**data, "params_b": None}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> "Model":
        if self.params_b is None and self.name is None and self.hf_config is None:
            raise missing_error("params_b", None)
        if self.family != "llm":
            for name in ("name", "hf_config"):
                if getattr(self, name) is not None:
                    raise field_error(
                        name,
                        "the model table and config.json describe language models; for a "
                        f"{self.family} model give params_b",
                        getattr(self, name),
                    )
            if self.params_b is None:
                raise missing_error("params_b", None)
        self._image_keys()
        if self.family == "llm" and self.task == "inference" and self.batch != 1:
            raise field_error(
                "batch",
                "batch is the micro-batch of a training step; a language model being served "
                "keeps sequences in flight instead: give them as concurrent_sequences "
                "(--concurrent)",
                self.batch,
            )
        if (
            self.active_params_b is not None
            and self.params_b is not None
            and self.active_params_b > self.params_b
        ):
            raise field_error(
                "active_params_b",
                "more parameters active per token than the model has (params_b)",
                self.active_params_b,
            )
        if self.task == "qlora" and self.precision not in (None, "int4"):
            raise field_error(
                "precision",
                'qlora keeps the frozen base in 4 bits: use precision = "int4", or task = '
                '"lora" for a base in another precision',
                self.precision,
            )
        if self.task in FULL_TRAINING_TASKS and self.precision in ("fp8", "int8", "int4"):
            raise field_error(
                "precision",
                f"{self.task} trains 16- or 32-bit weights (mixed precision keeps an FP32 "
                'master copy); use bf16, fp16 or fp32, or task = "qlora" / "lora"',
                self.precision,
            )
        return self

    def _image_keys(self) -> None:
        if self.family != "diffusion":
            for name in ("resolution", "vae_slicing"):
                if getattr(self, name) not in (None, False):
                    raise field_error(
                        name,
                        'an image size is for a diffusion model (family = "diffusion")',
                        getattr(self, name),
                    )
            return
        size = self.resolution
        sides = [size] if isinstance(size, int) else (size or [])
        if isinstance(size, list) and len(size) != 2:
            raise field_error("resolution", "give [width, height], two numbers of pixels", size)
        for side in sides:
            if isinstance(side, bool) or not 8 <= side <= 16_384:
                raise field_error("resolution", "a side must be 8 to 16,384 pixels", size)
