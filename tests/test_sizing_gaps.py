"""The sizing gaps of issue #33, each on the exact input shape it was reported with:
sliding-window KV caches, the position limit, ``--batch`` on a served language model,
diffusion activations from resolution and batch, and an estimate that leaves a term out
(the need is unknown: ``size`` shows what it has, ``advise`` refuses)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.workload_model import Model
from gpuadvisor.pipeline import advise
from gpuadvisor.sizing import size_model
from gpuadvisor.sizing.estimate import GIB, estimate_memory

from .conftest import CliResult

Cli = Callable[..., CliResult]
CONFIGS = Path(__file__).parent / "fixtures" / "hfconfig"
#: SDXL base 1.0: UNet 2,567,463,684 + text encoders 123,060,480 and 694,659,841 + VAE
#: 83,653,863 parameters (the pipeline Hugging Face measured).
SDXL_PARAMS_B = 3.468837868
#: Stable Diffusion 1.5: UNet 859,520,964 + text encoder 123,060,480 + VAE 83,653,863.
SD15_PARAMS_B = 1.066235307


# -- sliding windows -------------------------------------------------------------------


def test_mistral_v01_offers_the_windowed_kv_beside_the_whole_context() -> None:
    e = size_model(Model(hf_config=str(CONFIGS / "mistral-7b-v0.1.json"), context_tokens=32768))
    assert e.kv_cache_bytes == 128 * 1024 * 32768  # 4 GiB: every token in every layer
    assert e.kv_cache_windowed_bytes == 128 * 1024 * 4096  # the last 4,096 tokens
    from gpuadvisor.decision.sizing import assumptions

    note = next(line for line in assumptions(e) if line.startswith("Sliding window"))
    assert "keeps every token of the context in every layer (vLLM without" in note
    assert "needs 0.5 GiB of KV cache instead of 4" in note


def test_gemma2_slides_only_every_other_layer() -> None:
    e = size_model(Model(hf_config=str(CONFIGS / "gemma-2-9b-it.json"), context_tokens=8192))
    assert e.facts.arch is not None and e.facts.arch.sliding_layers == 21
    assert e.kv_cache_windowed_bytes == pytest.approx(0.75 * e.kv_cache_bytes)
    table = estimate_memory(Model(name="gemma-2-9b", context_tokens=8192))
    assert table.kv_cache_windowed_bytes == e.kv_cache_windowed_bytes


def test_phi3_window_and_no_offer_when_the_context_fits_it() -> None:
    e = size_model(Model(hf_config=str(CONFIGS / "phi-3-mini-4k-instruct.json")))
    assert e.kv_cache_windowed_bytes == pytest.approx(e.kv_cache_bytes * 2047 / 4096)
    short = size_model(
        Model(hf_config=str(CONFIGS / "phi-3-mini-4k-instruct.json"), context_tokens=2000)
    )
    assert short.kv_cache_windowed_bytes is None
    nemo = size_model(Model(hf_config=str(CONFIGS / "mistral-nemo-base-2407.json")))
    assert nemo.kv_cache_windowed_bytes is None  # "sliding_window": null


# -- the position limit --------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "context", "words"),
    [
        ("gpt2.json", 2048, "n_positions = 1,024"),
        ("mistral-7b-v0.1.json", 65536, "max_position_embeddings = 32,768"),
        ("opt-125m.json", 4096, "max_position_embeddings = 2,048"),
    ],
)
def test_a_context_beyond_the_position_limit_names_both_numbers(
    config: str, context: int, words: str
) -> None:
    with pytest.raises(InputError) as caught:
        size_model(Model(hf_config=str(CONFIGS / config), context_tokens=context))
    assert f"context_tokens = {context:,}" in caught.value.message
    assert words in caught.value.message
    assert caught.value.field == "workload.model.context_tokens"


def test_rope_scaling_extends_the_limit_as_vllm_does() -> None:
    lite = size_model(Model(hf_config=str(CONFIGS / "deepseek-v2-lite.json")))
    assert lite.facts.arch is not None and lite.facts.arch.max_positions == 4096 * 40  # yarn
    small = size_model(Model(hf_config=str(CONFIGS / "llama-3.2-1b-instruct.json")))
    assert small.facts.arch is not None and small.facts.arch.max_positions == 131072  # llama3
    at_limit = Model(hf_config=str(CONFIGS / "mistral-7b-v0.1.json"), context_tokens=32768)
    assert size_model(at_limit).kv_cache_bytes > 0


def test_the_limit_error_is_exit_2_naming_the_flag(cli: Cli) -> None:
    result = cli("size", "--hf-config", str(CONFIGS / "gpt2.json"), "--context", "2048")
    assert result.exit_code == 2
    assert "--context" in result.stderr and "1,024" in result.stderr
    assert "Traceback" not in result.stderr


# -- --batch on a served language model -------------------------------------------------


def test_batch_on_llm_inference_is_refused_naming_concurrent(cli: Cli) -> None:
    result = cli("size", "--model", "llama-3.1-8b", "--batch", "4")
    assert result.exit_code == 2
    assert "--batch" in result.stderr and "--concurrent" in result.stderr
    with pytest.raises(ValueError, match="concurrent_sequences"):
        Model(name="llama-3.1-8b", batch=4)
    Model(name="llama-3.1-8b", batch=4, task="lora")  # a training micro-batch is fine


def test_batch_help_says_what_it_means(cli: Cli) -> None:
    result = cli("size", "--help")
    assert "--concurrent" in result.stdout and "images" in result.stdout


# -- diffusion -------------------------------------------------------------------------


def _sdxl(**extra: object) -> float:
    model = Model(
        family="diffusion",
        params_b=SDXL_PARAMS_B,
        precision="fp16",
        resolution=1024,
        batch=4,
        **extra,
    )
    e = estimate_memory(model)
    assert e.complete
    # torch.cuda.max_memory_allocated counts tensors: no CUDA context, no allocator slack.
    return (e.weights_bytes + e.activations_bytes) / GIB


def test_sdxl_four_images_at_1024_is_huggingfaces_measurement() -> None:
    """Hugging Face, "Exploring simple optimizations for SDXL": fp16 + SDPA, 4 images of
    1024 x 1024: 21.72 GiB; with VAE slicing 15.40 GiB (the figures it is fitted on)."""
    assert _sdxl() == pytest.approx(21.72, rel=0.01)
    assert _sdxl(vae_slicing=True) == pytest.approx(15.40, rel=0.01)


@pytest.mark.parametrize(
    ("params_b", "precision", "side", "measured"),
    [
        # Sayak Paul's diffusers benchmarks, batch 1, SDPA: SDXL in fp32 at 1024 x 1024,
        # 16.827; SD 1.5 in bf16 at 512 x 512, 2.616 (huggingface.co/datasets/sayakpaul/
        # sample-datasets); neither was used to fit the constants.
        (SDXL_PARAMS_B, "fp32", 1024, 16.827),
        (SD15_PARAMS_B, "bf16", 512, 2.616),
    ],
)
def test_diffusion_figures_it_was_not_fitted_on_are_within_five_percent(
    params_b: float, precision: str, side: int, measured: float
) -> None:
    e = estimate_memory(
        Model(family="diffusion", params_b=params_b, precision=precision, resolution=side)
    )
    assert (e.weights_bytes + e.activations_bytes) / GIB == pytest.approx(measured, rel=0.05)


def test_diffusion_activations_grow_with_pixels_and_images() -> None:
    def acts(**extra: object) -> float:
        model = Model(family="diffusion", params_b=3.5, **extra)
        return estimate_memory(model).activations_bytes

    one = acts(resolution=512)
    assert acts(resolution=1024) == pytest.approx(4 * one)
    assert acts(resolution=[1024, 512]) == pytest.approx(2 * one)
    assert acts(resolution=512, batch=3) == pytest.approx(3 * one)


def test_image_keys_are_for_diffusion_models_only() -> None:
    with pytest.raises(ValueError, match="diffusion"):
        Model(name="llama-3.1-8b", resolution=1024)
    with pytest.raises(ValueError, match="width, height"):
        Model(family="diffusion", params_b=3.5, resolution=[1024, 1024, 3])


# -- an estimate that leaves a term out --------------------------------------------------

HEAD = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "inference"
objective = "throughput"
"""


def test_diffusion_without_a_size_is_incomplete_and_names_the_key() -> None:
    e = estimate_memory(Model(family="diffusion", params_b=SDXL_PARAMS_B, precision="fp16"))
    assert not e.complete and e.missing == ("activations_gib",)
    assert e.missing_keys == ("resolution",)
    assert 7.0 < e.total_gib < 8.0  # the weights-only figure the issue saw sized a card


def test_size_prints_the_partial_breakdown_with_the_term_named(cli: Cli) -> None:
    result = cli("size", "--family", "diffusion", "--params-b", "3.47", "--precision", "fp16")
    assert result.exit_code == 0, result.stderr
    assert re.search(r"^  activations +not estimated$", result.stdout, re.MULTILINE)
    assert "at least" in result.stdout and "The memory need is unknown" in result.stdout
    as_json = cli("size", "--family", "diffusion", "--params-b", "3.47", "--format", "json").stdout
    assert '"vram_need_gib": null' in as_json


@pytest.mark.parametrize(
    ("model", "field", "asks"),
    [
        ('family = "diffusion"\nparams_b = 3.47\n', "workload.model.resolution", "resolution"),
        ('family = "vision"\nparams_b = 0.3\n', "workload.vram_need_gib", "vram_need_gib"),
        (
            'family = "diffusion"\nparams_b = 3.47\ntask = "lora"\nresolution = 1024\n',
            "workload.vram_need_gib",
            "vram_need_gib",
        ),
    ],
)
def test_advise_refuses_an_unknown_need(
    cli: Cli, tmp_path: Path, model: str, field: str, asks: str
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(HEAD + "\n[workload.model]\n" + model)
    with pytest.raises(InputError) as caught:
        advise(path, sensitivity=False)
    assert caught.value.field == field and asks in (caught.value.hint or "")
    assert "unknown" in caught.value.message and "activations" in caught.value.message
    result = cli("advise", str(path))
    assert result.exit_code == 2 and str(path) in result.stderr
    assert "Traceback" not in result.stderr


def test_a_stated_need_lets_advise_go_on(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        HEAD.replace("[workload]", "[workload]\nvram_need_gib = 21.7")
        + '\n[workload.model]\nfamily = "diffusion"\nparams_b = 3.47\n'
    )
    decision = advise(path, sensitivity=False)
    assert decision.sizing.source == "stated" and decision.sizing.vram_need_gib == 21.7
    assert any("leaves a term out" in line for line in decision.sizing.assumptions)
    assert not any("memory need is unknown" in line for line in decision.sizing.assumptions)


def test_the_questionnaire_asks_a_diffusion_models_image_size(tmp_path: Path) -> None:
    from gpuadvisor.ask import profile_document
    from gpuadvisor.inputs.profile import load_profile

    from .test_ask import run_flow

    flow = run_flow(
        {
            "workload.kind": "inference",
            "workload.objective": "throughput",
            "workload.vram_need_gib": "unknown",
            "workload.model.family": "diffusion",
            "workload.model.params_b": "3.47",
            "workload.model.precision": "fp16",
            "workload.model.resolution": "1216x832",
            "workload.model.vae_slicing": "yes",
        }
    )
    assert "workload.model.resolution" in flow.asked
    model = flow.profile.workload.model
    assert model is not None and (model.resolution, model.vae_slicing) == ([1216, 832], True)
    path = tmp_path / "p.toml"
    path.write_text(profile_document(flow.profile))
    assert load_profile(path) == flow.profile
    decision = advise(path, sensitivity=False)
    assert decision.sizing.source == "derived" and decision.sizing.vram_need_gib is not None
