"""The estimator against figures published by papers, framework documentation and model
publishers, each with the tolerance its source implies.

A figure printed with two decimals is held to half a unit of its last digit (about
0.5%); a rounded one ("24 GB", "1.6 GB") to the rounding; a statement that something
fits a card ("a 65B model on a single 48GB GPU") is an upper bound; a figure that counts
nominal bits only (4 bits for every parameter) is a lower bound for an estimate that
adds the quantisation groups' scales and the 16-bit embeddings real checkpoints have.
The README's "Sizing" section summarises how close the estimator comes.

There is no GPU measurement here: the issue's item 7 (models of given shapes built in
PyTorch on a real GPU, torch.cuda.max_memory_allocated recorded as a fixture) needs a
machine this project did not have; the only measured figure below is the one Hugging
Face accelerate's documentation prints for bert-base-cased.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from gpuadvisor.inputs.workload_model import Model
from gpuadvisor.sizing import GIB, MemoryEstimate, estimate_memory

GB = 1e9
MIB = 2.0**20


def model_states(estimate: MemoryEstimate) -> float:
    """Weights, gradients and optimizer states: what ZeRO and accelerate count."""
    return estimate.weights_bytes + estimate.gradients_bytes + estimate.optimizer_bytes


@dataclass(frozen=True)
class Published:
    name: str
    source: str
    figure: float
    unit: float
    kind: Literal["within", "at most", "at least"]
    tolerance: float
    model: dict[str, Any]
    measure: Callable[[MemoryEstimate], float]

    def ours(self) -> float:
        return self.measure(estimate_memory(Model(**self.model))) / self.unit


FIGURES = (
    Published(
        "zero-gpt2-1.5b-model-states",
        "ZeRO (arXiv 1910.02054) 3.1: a 1.5B GPT-2 with mixed-precision Adam needs at least "
        "24 GB for its model states",
        24.0,
        GB,
        "within",
        0.01,
        {"family": "other", "params_b": 1.5, "task": "full-finetune"},
        model_states,
    ),
    Published(
        "zero-7.5b-model-states",
        "ZeRO (arXiv 1910.02054) figure 1: 7.5B parameters, 120 GB of model states",
        120.0,
        GB,
        "within",
        0.01,
        {"family": "other", "params_b": 7.5, "task": "full-finetune"},
        model_states,
    ),
    Published(
        "accelerate-bert-fp32-load",
        "Hugging Face accelerate docs, model memory estimator: bert-base-cased float32 "
        "413.18 MB (MiB); measured on CUDA: 413.68 MB",
        413.68,
        MIB,
        "within",
        0.005,
        {"family": "other", "params_b": 0.10831, "precision": "fp32"},
        lambda e: e.weights_bytes,
    ),
    Published(
        "accelerate-bert-fp32-adam",
        "Hugging Face accelerate docs: bert-base-cased, training using Adam in float32, 1.61 GB",
        1.61,
        GIB,
        "within",
        0.005,
        {"family": "other", "params_b": 0.10831, "precision": "fp32", "task": "full-finetune"},
        model_states,
    ),
    Published(
        "vllm-opt-13b-kv-per-token",
        "vLLM / PagedAttention (arXiv 2309.06180) 3: OPT-13B, 800 KB of KV cache per token "
        "(2 x 5120 x 40 x 2 bytes)",
        800.0,
        1024.0,
        "within",
        0.001,
        {"name": "opt-13b"},
        lambda e: e.kv_bytes_per_token,
    ),
    Published(
        "vllm-opt-13b-kv-one-request",
        "vLLM / PagedAttention 3: one OPT-13B request of 2048 tokens, up to 1.6 GB of KV cache",
        1.6,
        GIB,
        "within",
        0.05,
        {"name": "opt-13b", "context_tokens": 2048},
        lambda e: e.kv_cache_bytes,
    ),
    *(
        Published(
            f"hf-llama31-kv-{name}-{tokens // 1000}k",
            "Hugging Face, 'Llama 3.1 - 405B, 70B & 8B' blog, KV cache in FP16: "
            f"{name} at {tokens // 1000}k tokens, {figure} GB (GiB of 1000-token k)",
            figure,
            GIB,
            "within",
            0.005,
            {"name": name, "context_tokens": tokens},
            lambda e: e.kv_cache_bytes,
        )
        for name, tokens, figure in (
            ("llama-3.1-8b", 16_000, 1.95),
            ("llama-3.1-8b", 128_000, 15.62),
            ("llama-3.1-70b", 16_000, 4.88),
            ("llama-3.1-70b", 128_000, 39.06),
        )
    ),
    *(
        Published(
            f"hf-llama31-weights-{name}-{precision}",
            "Hugging Face, 'Llama 3.1' blog, inference memory to load the checkpoint: "
            f"{name} {precision}, {figure} GB",
            figure,
            GB,
            "within" if precision == "bf16" else "at least",
            0.015,
            {"name": name, "precision": precision},
            lambda e: e.weights_bytes,
        )
        for name, precision, figure in (
            ("llama-3.1-8b", "bf16", 16.0),
            ("llama-3.1-70b", "bf16", 140.0),
            ("llama-3.1-405b", "bf16", 810.0),
            ("llama-3.1-8b", "fp8", 8.0),
            ("llama-3.1-70b", "fp8", 70.0),
            ("llama-3.1-405b", "fp8", 405.0),
            ("llama-3.1-8b", "int4", 4.0),
            ("llama-3.1-70b", "int4", 35.0),
            ("llama-3.1-405b", "int4", 203.0),
        )
    ),
    Published(
        "deepseek-v2-mla-cache",
        "DeepSeek-V2 (arXiv 2405.04434) 2.1, table 1: latent attention caches (d_c + d_h^R) "
        "= 512 + 64 values per token and layer; DeepSeek-V3 has 61 layers, BF16 cache",
        (512 + 64) * 61 * 2,
        1.0,
        "within",
        0.0,
        {"name": "deepseek-v3"},
        lambda e: e.kv_bytes_per_token,
    ),
    Published(
        "qlora-65b-fits-48gb",
        "QLoRA (arXiv 2305.14314): finetuning a 65B model on a single 48GB GPU (LoRA r = 64 "
        "on all linear layers, sequence 512, batch 1 as in its memory figure)",
        48.0,
        GIB,
        "at most",
        0.0,
        {"name": "llama-65b", "task": "qlora", "lora_rank": 64, "context_tokens": 512},
        lambda e: e.total_bytes,
    ),
)


@pytest.mark.parametrize("published", FIGURES, ids=lambda p: p.name)
def test_estimate_against_published_figure(published: Published) -> None:
    ours = published.ours()
    if published.kind == "within":
        assert ours == pytest.approx(published.figure, rel=published.tolerance, abs=1e-9), (
            published.source
        )
    elif published.kind == "at most":
        assert ours <= published.figure * (1 + published.tolerance), published.source
    else:
        assert ours >= published.figure * (1 - published.tolerance), published.source


def test_qlora_65b_estimate_is_not_vacuous() -> None:
    """The 48 GB bound is met by a real estimate: the 4-bit base alone is over 30 GiB."""
    estimate = estimate_memory(
        Model(name="llama-65b", task="qlora", lora_rank=64, context_tokens=512)
    )
    assert 30 * GIB < estimate.weights_bytes < estimate.total_bytes


def test_llama31_405b_kv_in_the_blog_is_twice_the_configs() -> None:
    """The blog lists 123.05 GB at 128k tokens for 405B, as if it had 16 KV heads; its
    config.json has num_key_value_heads = 8, which gives half (the 8B and 70B rows, same
    formula, agree to the digit). The estimator follows the config."""
    estimate = estimate_memory(Model(name="llama-3.1-405b", context_tokens=128_000))
    assert estimate.kv_cache_bytes / GIB == pytest.approx(123.05 / 2, rel=0.005)
