"""The questions about ``[workload.model]``: asked when the person does not know the
memory one job needs and describes the model instead, so gpuadvisor can derive it.

Spliced into ``QUESTIONS`` right after the memory question; kept apart so the questions
module stays readable.
"""

from __future__ import annotations

import re
from typing import Any, Final

from gpuadvisor.ask.fields import UNSTATED, Answers
from gpuadvisor.ask.question import Question
from gpuadvisor.ask.units import is_unknown, memory_converter
from gpuadvisor.errors import did_you_mean
from gpuadvisor.sizing.tables import find_model, model_names
from gpuadvisor.vocabulary import ADAPTER_TASKS, FULL_TRAINING_TASKS

#: Answers to the memory question that choose to describe the model instead ("don't
#: know" and its kin mean the same there: :func:`gpuadvisor.ask.units.is_unknown`).
DESCRIBE_WORDS: Final = frozenset(
    {"describe", "describe it", "describe the model", "describe model", "model", "estimate"}
)
#: Training sized as adapters: LoRA and QLoRA, and a method not decided yet, which is
#: sized as LoRA (:data:`gpuadvisor.sizing.estimate.UNKNOWN_TASK_READ_AS`).
SIZED_AS_ADAPTERS: Final = (*ADAPTER_TASKS, "unknown")
_NONE: Final = frozenset({"none", "no", "-", "n/a", "na", ""})
_MEMORY: Final = memory_converter(optional=True)


def _number_text(text: str) -> str:
    cleaned = text.strip().replace("_", "")
    return (
        cleaned.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", cleaned) else cleaned
    )


def memory_gib(text: str) -> Any:
    """An answer to the memory question: a number of GiB, or one with a memory unit read
    as the questionnaire reads every memory answer (GB decimal, MiB as nvidia-smi prints
    them, the conversion said), or "describe" (or "don't know") to describe the model
    instead (None)."""
    if is_unknown(text) or " ".join(text.strip().lower().split()) in DESCRIBE_WORDS:
        return None
    return _MEMORY(text)


def _tokens(text: str) -> Any:
    """Tokens, with ``k`` for thousands as context sizes are spoken (8k = 8,192)."""
    cleaned = text.strip().lower().removesuffix("tokens").strip()
    match = re.fullmatch(r"(\d+)\s*k", cleaned)
    if match:
        return str(int(match.group(1)) * 1024)
    return _number_text(cleaned)


def _model_name(text: str) -> Any:
    cleaned = text.strip()
    if find_model(cleaned) is None:
        hint = did_you_mean(cleaned.lower(), model_names())
        known = ", ".join(model_names())
        raise ValueError(
            f"gpuadvisor does not know {cleaned!r}; "
            + (f"{hint} " if hint else "")
            + f"Known: {known}; or answer other"
        )
    return cleaned


def _path_or_none(text: str) -> Any:
    cleaned = text.strip()
    return None if cleaned.lower() in _NONE else cleaned


def _describes_model(a: Answers) -> bool:
    """The memory need was answered "describe": the model is described instead."""
    return a.known("workload.vram_need_gib") and a["workload.vram_need_gib"] is None


def _language_model(a: Answers) -> bool:
    return _describes_model(a) and a["workload.model.family"] == "llm"


def _unnamed_language_model(a: Answers) -> bool:
    return _language_model(a) and not a.known("workload.model.name")


def _serving(a: Answers) -> bool:
    return _language_model(a) and a["workload.model.task"] == "inference"


def _generating_images(a: Answers) -> bool:
    return (
        _describes_model(a)
        and a["workload.model.family"] == "diffusion"
        and a["workload.model.task"] == "inference"
    )


def _image_size(text: str) -> Any:
    """Pixels as ``1024`` (a square image) or ``1216x832`` (width x height)."""
    parts = text.strip().lower().removesuffix("pixels").removesuffix("px").strip()
    sides = [side.strip() for side in parts.replace("×", "x").split("x")]
    if len(sides) > 2 or not all(side.isdigit() for side in sides):
        raise ValueError("give the image size as 1024, or width x height such as 1216x832")
    numbers = [int(side) for side in sides]
    return numbers[0] if len(numbers) == 1 else numbers


def _training(a: Answers) -> bool:
    return _describes_model(a) and a["workload.model.task"] != "inference"


def _checkpointing(a: Answers) -> Any:
    """On for QLoRA, as its recipes do; open where the method is not decided (the model
    then turns it on for QLoRA, off otherwise, and what would change prices QLoRA with
    it on); off else."""
    task = a["workload.model.task"]
    return UNSTATED if task == "unknown" else task == "qlora"


def _native_precision(a: Answers) -> str:
    entry = find_model(str(a["workload.model.name"])) if a.known("workload.model.name") else None
    return entry.native_precision if entry is not None else "bf16"


#: Known model families, for the prompt (the full list is in the "not known" answer).
_FAMILIES: Final = (
    "Llama 3.x and 2, Mistral, Mixtral, Qwen2.5 and 3, Gemma 2, Phi-3 and 4, DeepSeek-V3"
)

MODEL_QUESTIONS: Final[tuple[Question, ...]] = (
    Question(
        "workload.model.family",
        "What kind of AI model does the job run?",
        "Language models get the full estimate (weights, attention cache, activations); for "
        "the others the weights and training states are estimated; if unsure, answer llm "
        "for anything that reads or writes text.",
        when=_describes_model,
        choices=(
            ("llm", "a language model: chat, text, code (Llama, Mistral, Qwen, ...)"),
            ("diffusion", "an image or video generator (Stable Diffusion, Flux, ...)"),
            ("vision", "an image model: classification, detection, segmentation"),
            ("other", "any other neural network"),
        ),
    ),
    Question(
        "workload.model.name",
        "Which model is it? Give its name as gpuadvisor knows it (for example "
        "llama-3.1-70b or qwen2.5-7b), or answer other.",
        f"A known model brings its real size and architecture ({_FAMILIES}); if yours is not "
        "among them, answer other and give its size next.",
        when=_language_model,
        convert=_model_name,
        unknown_answer="other",
    ),
    Question(
        "workload.model.params_b",
        "How many billion parameters does the model have (the 70 in 'Llama 3.1 70B'; all "
        "experts together for a mixture-of-experts model)?",
        "The weights are most of the memory; the model card or the download page states the "
        "size, usually in its name.",
        when=lambda a: _describes_model(a) and not a.known("workload.model.name"),
        units=("billion", "b"),
    ),
    Question(
        "workload.model.active_params_b",
        "If it is a mixture-of-experts model, how many billion parameters does each token "
        "use? Answer none for an ordinary model.",
        "Only that share is read for each token, which sets the speed; the memory still "
        "holds every expert; if unsure, answer none.",
        when=_unnamed_language_model,
        units=("billion", "b"),
    ),
    Question(
        "workload.model.hf_config",
        "Is the model's config.json file (from Hugging Face) on this computer? Give its "
        "path, or answer none.",
        "It holds the exact layers and attention heads, which size the attention cache; it "
        "is read from this computer only, never downloaded; a relative path is read from "
        "the profile's folder; if unsure, answer none.",
        when=_unnamed_language_model,
        convert=_path_or_none,
    ),
    Question(
        "workload.model.task",
        "What does the job do with the model?",
        "Training needs several times the memory of running the model, and training every "
        "weight several times that of training adapters; if unsure, answer inference for "
        "serving, and unknown for training whose method is not decided yet.",
        when=_describes_model,
        choices=(
            ("inference", "runs the model to answer requests"),
            ("full-finetune", "trains every weight of an existing model"),
            ("lora", "trains small adapters (LoRA) beside the frozen model"),
            ("qlora", "trains adapters on a model stored in 4 bits (QLoRA)"),
            ("pretrain", "trains a new model from scratch"),
            (
                "unknown",
                "training, not decided yet how: sized as LoRA adapters, the usual way to "
                "adapt a published model, and the report says so",
            ),
        ),
        suggest=lambda a: "unknown" if a["workload.kind"] == "training" else None,
    ),
    Question(
        "workload.model.precision",
        "In what number format are the model's weights kept on the GPU?",
        "Fewer bits per weight means less memory and faster answers, at some loss of "
        "quality; if unsure, keep the suggestion (how the model is published).",
        when=lambda a: (
            _describes_model(a) and a["workload.model.task"] not in ("qlora", *FULL_TRAINING_TASKS)
        ),
        choices=(
            ("fp32", "32-bit floats (rare for large models)"),
            ("bf16", "16-bit, how most models are published"),
            ("fp16", "16-bit, for older GPUs"),
            ("fp8", "8-bit floats (recent data-center and Ada/Blackwell cards)"),
            ("int8", "8-bit quantised (GPTQ, bitsandbytes)"),
            ("int4", "4-bit quantised (AWQ, GPTQ, GGUF Q4)"),
        ),
        suggest=_native_precision,
    ),
    Question(
        "workload.model.context_tokens",
        "At most how many tokens does one request or training example hold, question and "
        "answer together (a page of text is about 500 tokens; 8k = 8,192)?",
        "Each token in flight keeps attention data in the card's memory; if unsure, give "
        "the longest conversation or document you plan for.",
        when=_language_model,
        convert=_tokens,
        units=("tokens",),
    ),
    Question(
        "workload.model.concurrent_sequences",
        "How many requests or conversations should ONE copy of the model serve at the same time?",
        "Each keeps its own attention cache on the card, so many users need much more "
        "memory than one; separate copies of the model are the next question; if unsure, "
        "answer 1.",
        when=_serving,
        units=("requests", "users", "sequences"),
    ),
    Question(
        "workload.model.batch",
        "How many examples does one training step put through one GPU (the micro-batch)?",
        "Activations grow with it; gradient accumulation over several steps does not count; "
        "if unsure, answer 1.",
        when=_training,
        units=("examples", "samples"),
    ),
    Question(
        "workload.model.resolution",
        "How large is one generated image, in pixels (1024 for 1024 x 1024, or width x "
        "height such as 1216x832)?",
        "Generating images needs memory in proportion to their pixels, on top of the "
        "weights; if unsure, give the largest size you plan for.",
        when=_generating_images,
        convert=_image_size,
        units=("pixels", "px"),
    ),
    Question(
        "workload.model.vae_slicing",
        "Will the images of a batch be decoded one at a time (diffusers' VAE slicing)?",
        "Decoding all images at once is the memory peak of a batch; slicing lowers it at "
        "almost no cost in speed; if unsure, answer no.",
        when=_generating_images,
        suggest=lambda a: False,
    ),
    Question(
        "workload.model.lora_rank",
        "What LoRA rank (r) will the adapters have?",
        "Higher ranks train more parameters; QLoRA found the rank matters little once every "
        "layer has adapters; if unsure, keep 16.",
        when=lambda a: _describes_model(a) and a["workload.model.task"] in SIZED_AS_ADAPTERS,
        suggest=lambda a: 16,
    ),
    Question(
        "workload.model.activation_checkpointing",
        "Will training recompute activations to save memory (gradient checkpointing)?",
        "It trades about a third more compute for a much smaller memory peak; if unsure, "
        "keep the suggestion (QLoRA recipes turn it on; with the method not decided, it "
        "is left open too).",
        when=_training,
        suggest=_checkpointing,
    ),
    Question(
        "workload.model.kv_cache_precision",
        "In what number format will the server keep its attention cache (KV cache)?",
        "8-bit halves the cache of long or many conversations at a small quality cost; if "
        "unsure, keep the suggestion.",
        when=_serving,
        choices=(
            ("fp32", "32-bit (only with 32-bit weights)"),
            ("bf16", "16-bit, the usual default"),
            ("fp16", "16-bit, for older GPUs"),
            ("fp8", "8-bit floats (vLLM, TensorRT-LLM options)"),
            ("int8", "8-bit integers"),
        ),
        suggest=lambda a: "fp32" if a["workload.model.precision"] == "fp32" else "bf16",
    ),
)
