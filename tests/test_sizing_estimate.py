"""The memory terms and speed bounds, each against its formula written out by hand."""

from __future__ import annotations

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.workload_model import Model
from gpuadvisor.sizing import GIB, estimate_memory, speed_on
from gpuadvisor.sizing.speed import bytes_per_step
from gpuadvisor.sizing.tables import constants


def test_int4_weights_are_grouped_four_bit_with_sixteen_bit_embeddings() -> None:
    e = estimate_memory(Model(name="llama-3.1-70b", precision="int4"))
    embedding = 2 * 128256 * 8192
    expected = (70.6e9 - embedding) * (4 + 20 / 128) / 8 + embedding * 2
    assert e.weights_bytes == pytest.approx(expected)
    assert e.embeddings_16bit


def test_sixteen_bit_weights_are_two_bytes_each() -> None:
    e = estimate_memory(Model(name="llama-3.1-70b"))
    assert e.precision == "bf16" and e.precision_source == "task"
    assert e.weights_bytes == pytest.approx(70.6e9 * 2)


def test_kv_cache_is_layers_kv_heads_head_dim_times_context_and_sequences() -> None:
    e = estimate_memory(
        Model(name="llama-3.1-70b", precision="int4", context_tokens=8192, concurrent_sequences=8)
    )
    assert e.kv_bytes_per_token == 2 * 80 * 8 * 128 * 2
    assert e.kv_cache_bytes == 2 * 80 * 8 * 128 * 2 * 8192 * 8
    assert e.kv_cache_bytes / GIB == 20.0


def test_an_eight_bit_kv_cache_halves_it() -> None:
    half = estimate_memory(Model(name="qwen2.5-7b", kv_cache_precision="fp8"))
    full = estimate_memory(Model(name="qwen2.5-7b"))
    assert half.kv_cache_bytes * 2 == full.kv_cache_bytes


def test_latent_attention_caches_the_compressed_vector() -> None:
    e = estimate_memory(Model(name="deepseek-v3", context_tokens=1000))
    assert e.kv_bytes_per_token == 61 * (512 + 64) * 2
    assert e.precision == "fp8" and e.precision_source == "native"


def test_training_has_no_kv_cache_and_inference_no_gradients() -> None:
    served = estimate_memory(Model(name="llama-3.1-8b"))
    trained = estimate_memory(Model(name="llama-3.1-8b", task="full-finetune"))
    assert served.gradients_bytes == served.optimizer_bytes == 0
    assert trained.kv_cache_bytes == 0 and trained.gradients_bytes > 0


def test_full_finetune_is_sixteen_bytes_per_parameter_of_model_states() -> None:
    e = estimate_memory(Model(name="llama-3.1-8b", task="full-finetune"))
    params = 8.03e9
    assert (e.weights_bytes, e.gradients_bytes, e.optimizer_bytes) == pytest.approx(
        (2 * params, 2 * params, 12 * params)
    )
    assert e.states == "mixed_precision_adam"


def test_fp32_training_keeps_four_bytes_for_weights_gradients_momentum_variance() -> None:
    e = estimate_memory(Model(params_b=1.0, family="other", task="pretrain", precision="fp32"))
    assert (e.weights_bytes, e.gradients_bytes, e.optimizer_bytes) == (4e9, 4e9, 8e9)


def test_lora_trains_adapters_on_every_linear_layer_and_freezes_the_base() -> None:
    e = estimate_memory(Model(name="llama-3.1-70b", task="lora", lora_rank=8))
    per_layer = 8 * (2 * (8192 + 8192) + 2 * (8192 + 1024) + 3 * (8192 + 28672))
    assert e.trainable_params == 80 * per_layer
    assert e.gradients_bytes == pytest.approx(2 * 80 * per_layer)
    assert e.optimizer_bytes == pytest.approx(12 * 80 * per_layer)
    assert e.weights_bytes == pytest.approx(70.6e9 * 2 + 2 * 80 * per_layer)


def test_qlora_is_nf4_base_and_twelve_bytes_per_adapter_parameter() -> None:
    e = estimate_memory(Model(name="llama-3.1-8b", task="qlora"))
    assert e.precision == "nf4" and e.weight_bits == constants().weights["nf4"].bits_per_param
    assert e.checkpointing is True  # QLoRA's recipes recompute activations
    assert e.gradients_bytes + e.optimizer_bytes == pytest.approx(10 * e.trainable_params)


def test_checkpointing_keeps_layer_inputs_only() -> None:
    kept = estimate_memory(Model(name="llama-3.1-8b", task="lora", activation_checkpointing=True))
    full = estimate_memory(Model(name="llama-3.1-8b", task="lora", activation_checkpointing=False))
    tokens_hidden = 4096 * 4096
    logits = 4096 * 128256 * 6
    assert full.activations_bytes == pytest.approx(34 * tokens_hidden * 32 + logits)
    assert kept.activations_bytes == pytest.approx(
        2 * tokens_hidden * 32 + 34 * tokens_hidden + logits
    )


def test_overhead_is_the_cuda_context_and_a_share_of_the_tensors() -> None:
    e = estimate_memory(Model(name="llama-3.1-8b"))
    tensors = e.weights_bytes + e.kv_cache_bytes + e.activations_bytes
    assert e.overhead_bytes == pytest.approx(0.5 * GIB + 0.08 * tensors)
    assert e.total_bytes == pytest.approx(tensors + e.overhead_bytes)


def test_mixture_of_experts_holds_every_expert_in_memory() -> None:
    e = estimate_memory(Model(name="mixtral-8x7b"))
    assert e.weights_bytes == pytest.approx(46.7e9 * 2)
    assert e.facts.active_params == 12.9e9


def test_a_size_without_architecture_borrows_the_nearest_table_model() -> None:
    e = estimate_memory(Model(params_b=68.0))
    assert e.facts.arch_source == "nearest"
    assert e.facts.arch_reference in ("Llama 2 70B", "Llama 3.1 70B", "LLaMA 65B")
    assert e.weights_bytes == 68e9 * 2


def test_other_families_get_no_kv_cache_and_no_activation_guess() -> None:
    e = estimate_memory(Model(family="diffusion", params_b=2.6, task="lora"))
    assert e.kv_cache_bytes == 0 and e.activations_bytes == 0
    assert not e.activations_estimated
    assert e.trainable_params == pytest.approx(2.6e9 * constants().lora.share_without_architecture)


def test_unknown_name_is_an_input_error_with_a_suggestion() -> None:
    with pytest.raises(InputError) as caught:
        estimate_memory(Model(name="llama-3.1-7Ob"))
    assert caught.value.field == "workload.model.name"
    assert caught.value.hint == "did you mean 'llama-3.1-70b'?"


def test_params_that_contradict_the_named_model_are_refused() -> None:
    with pytest.raises(InputError) as caught:
        estimate_memory(Model(name="llama-3.1-70b", params_b=13.0))
    assert caught.value.field == "workload.model.params_b"
    assert "70.6" in caught.value.message
    near = estimate_memory(Model(name="llama-3.1-70b", params_b=70.0))  # within 5%: the table's
    assert near.facts.params == 70.6e9


# -- speed --------------------------------------------------------------------------------


def test_decode_reads_the_weights_and_the_kv_cache_once_per_step() -> None:
    e = estimate_memory(Model(name="llama-3.1-70b", precision="int4", context_tokens=8192))
    step = bytes_per_step(e)
    untied_input_embedding = 128256 * 8192 * 2
    assert step == pytest.approx(e.weights_bytes - untied_input_embedding + e.kv_cache_bytes)
    bound = speed_on(e, bandwidth_gbs=960.0, fp16_tflops=364.2)
    assert bound is not None
    assert bound.decode_ms_per_token == pytest.approx(step / 960e9 * 1000)
    assert bound.decode_tokens_per_s == pytest.approx(960e9 / step)


def test_prefill_is_two_flops_per_parameter_per_token_plus_attention() -> None:
    e = estimate_memory(Model(name="llama-3.1-8b", context_tokens=2048))
    bound = speed_on(e, bandwidth_gbs=1000.0, fp16_tflops=100.0)
    assert bound is not None
    flops = (2 * 8.03e9 + 2 * 32 * 1024 * 4096) * 2048
    assert bound.prefill_s == pytest.approx(flops / 100e12)


def test_an_fp8_model_prefills_at_the_fp8_rate_where_the_card_has_fp8_tensor_cores() -> None:
    """The prefill bound of an FP8 model on an H100 NVL used the FP16 rate: a bound "at
    least 1.44 s" where FP8 tensor cores make it 0.72 s. Ampere has no FP8 tensor cores;
    int4 weights are computed in 16 bits."""
    fp8 = estimate_memory(Model(name="llama-3.1-8b", precision="fp8", context_tokens=2048))
    fp16 = speed_on(fp8, bandwidth_gbs=1000.0, fp16_tflops=100.0)
    hopper = speed_on(fp8, bandwidth_gbs=1000.0, fp16_tflops=100.0, architecture="Hopper")
    ampere = speed_on(fp8, bandwidth_gbs=1000.0, fp16_tflops=100.0, architecture="Ampere")
    assert fp16 is not None and hopper is not None and ampere is not None
    assert hopper.prefill_s == pytest.approx(fp16.prefill_s / 2)
    assert ampere.prefill_s == pytest.approx(fp16.prefill_s)
    int4 = estimate_memory(Model(name="llama-3.1-8b", precision="int4", context_tokens=2048))
    a = speed_on(int4, bandwidth_gbs=1000.0, fp16_tflops=100.0)
    b = speed_on(int4, bandwidth_gbs=1000.0, fp16_tflops=100.0, architecture="Hopper")
    assert a is not None and b is not None and a.prefill_s == pytest.approx(b.prefill_s)


def test_a_model_split_over_cards_counts_their_summed_bandwidth() -> None:
    e = estimate_memory(Model(name="llama-3.1-70b"))
    one = speed_on(e, bandwidth_gbs=2000.0, fp16_tflops=700.0)
    two = speed_on(e, bandwidth_gbs=2000.0, fp16_tflops=700.0, cards=2)
    assert one is not None and two is not None
    assert two.decode_ms_per_token == pytest.approx(one.decode_ms_per_token / 2)
    assert two.prefill_s == pytest.approx(one.prefill_s / 2)


def test_more_sequences_read_more_experts_and_more_cache() -> None:
    one = estimate_memory(Model(name="mixtral-8x7b", precision="int4"))
    many = estimate_memory(Model(name="mixtral-8x7b", precision="int4", concurrent_sequences=16))
    single, batched = bytes_per_step(one), bytes_per_step(many)
    assert single is not None and batched is not None
    # One sequence reads 2 of 8 experts: about the active share of the weights.
    assert single < 0.35 * one.weights_bytes + one.kv_cache_bytes
    assert batched > 0.9 * many.weights_bytes  # 16 sequences touch nearly every expert


def test_latency_target_sets_the_answer_tokens_that_fit() -> None:
    e = estimate_memory(Model(name="llama-3.1-8b", context_tokens=1024))
    bound = speed_on(e, bandwidth_gbs=1000.0, fp16_tflops=100.0, latency_slo_ms=2000)
    assert bound is not None and bound.answer_tokens_within_slo is not None
    expected = int((2.0 - bound.prefill_s) / (bound.decode_ms_per_token / 1000))
    assert bound.answer_tokens_within_slo == expected
    slow = speed_on(e, bandwidth_gbs=1000.0, fp16_tflops=0.001, latency_slo_ms=2000)
    assert slow is not None and slow.answer_tokens_within_slo == 0


def test_no_speed_bound_for_training_or_other_families() -> None:
    for model in (
        Model(name="llama-3.1-8b", task="lora"),
        Model(family="vision", params_b=0.3),
    ):
        assert speed_on(estimate_memory(model), bandwidth_gbs=1000.0, fp16_tflops=100.0) is None
