"""``hf_config``: a local config.json read as untrusted input. The real architecture comes
out of a real-shaped file; a malformed or hostile one is exit 2 naming the key."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.workload_model import Model
from gpuadvisor.sizing import size_model
from gpuadvisor.sizing.arch import Architecture
from gpuadvisor.sizing.hfconfig import architecture_from_config, read_architecture
from gpuadvisor.sizing.tables import find_model

from .conftest import REPO

#: The keys of meta-llama/Llama-3.1-70B's config.json that matter, as published.
LLAMA_70B_CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 8192,
    "intermediate_size": 28672,
    "max_position_embeddings": 131072,
    "model_type": "llama",
    "num_attention_heads": 64,
    "num_hidden_layers": 80,
    "num_key_value_heads": 8,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}
#: deepseek-ai/DeepSeek-V3's config.json, the keys that matter.
DEEPSEEK_V3_CONFIG: dict[str, Any] = {
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "max_position_embeddings": 163840,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "vocab_size": 129280,
    "tie_word_embeddings": False,
}


def write(folder: Path, data: Any, name: str = "config.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.mark.parametrize(
    ("config", "table"), [(LLAMA_70B_CONFIG, "llama-3.1-70b"), (DEEPSEEK_V3_CONFIG, "deepseek-v3")]
)
def test_a_published_config_gives_the_tables_architecture(
    tmp_path: Path, config: dict[str, Any], table: str
) -> None:
    entry = find_model(table)
    assert entry is not None
    arch = read_architecture(write(tmp_path, config))
    assert arch.max_positions == config["max_position_embeddings"]
    # The table holds no position limit; everything else is the same shape.
    assert dataclasses.replace(arch, max_positions=0) == Architecture.of_entry(entry)


def test_the_bundled_example_config_is_the_tables_qwen(tmp_path: Path) -> None:
    entry = find_model("qwen2.5-7b")
    assert entry is not None
    example = REPO / "examples" / "models" / "qwen2.5-7b-config.json"
    arch = read_architecture(example)
    # Qwen2 carries biases on q, k and v that the table's layout leaves out (0.002%).
    plain = dataclasses.replace(arch, max_positions=0, qkv_bias=False)
    assert plain == Architecture.of_entry(entry)


def test_multimodal_configs_are_read_from_their_text_config(tmp_path: Path) -> None:
    wrapped = {"model_type": "llava", "text_config": LLAMA_70B_CONFIG, "vision_config": {}}
    assert read_architecture(write(tmp_path, wrapped)).layers == 80


def test_gpt_style_configs_keep_their_two_matrix_mlp_and_tied_head(tmp_path: Path) -> None:
    gpt2 = {"model_type": "gpt2", "n_layer": 48, "n_embd": 1600, "n_head": 25, "vocab_size": 50257}
    arch = read_architecture(write(tmp_path, gpt2))
    assert (arch.gated_mlp, arch.tied_embeddings, arch.intermediate) == (False, True, 6400)
    assert arch.total_params / 1e9 == pytest.approx(1.56, rel=0.02)  # GPT-2 XL: 1.5B


def test_hf_config_is_read_relative_to_the_profile(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    write(tmp_path / "models", LLAMA_70B_CONFIG)
    model = Model(hf_config="models/config.json", precision="int4")
    estimate = size_model(model, base_dir=tmp_path)
    assert estimate.facts.arch_source == "hf_config"
    assert estimate.facts.params == pytest.approx(70.55e9, rel=0.001)  # counted from it
    assert estimate.facts.arch_reference == str(tmp_path / "models" / "config.json")


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        ({"num_hidden_layers": "80"}, "num_hidden_layers", "expected a whole number, got str"),
        ({"num_hidden_layers": True}, "num_hidden_layers", "expected a whole number, got bool"),
        ({"num_hidden_layers": 80.5}, "num_hidden_layers", "expected a whole number, got float"),
        ({"num_hidden_layers": -3}, "num_hidden_layers", "must be between 1 and"),
        ({"num_hidden_layers": 10**12}, "num_hidden_layers", "must be between 1 and 1,000"),
        ({"num_hidden_layers": None}, "num_hidden_layers", "missing"),
        ({"hidden_size": [8192]}, "hidden_size", "expected a whole number, got list"),
        ({"num_key_value_heads": 7}, "num_key_value_heads", "cannot share 64"),
        ({"num_attention_heads": 60}, "num_attention_heads", "not a multiple"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings", "expected true or false"),
        ({"num_local_experts": 8}, "num_experts_per_tok", "needs it"),
        (
            {"num_local_experts": 8, "num_experts_per_tok": 9},
            "num_experts_per_tok",
            "more experts per token",
        ),
        ({"vocab_size": 0}, "vocab_size", "must be between 1"),
        ({"multi_query": "yes"}, "multi_query", "expected true or false"),
        ({"rope_scaling": {"rope_type": "linear", "factor": "4"}}, "rope_scaling", "factor"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 1e9}}, "rope_scaling", "factor"),
        (
            {"sliding_window": 4096, "layer_types": ["full_attention"]},
            "layer_types",
            "a list of 80 layer types",
        ),
        ({"max_position_embeddings": -1}, "max_position_embeddings", "must be between 0"),
    ],
)
def test_a_bad_value_names_its_key_and_line(
    tmp_path: Path, change: dict[str, Any], key: str, message: str
) -> None:
    config = {**LLAMA_70B_CONFIG, **change}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config, indent=2))
    with pytest.raises(InputError) as caught:
        read_architecture(path)
    error = caught.value
    assert error.field == key and message in error.message, error
    assert error.file == str(path)
    if key in path.read_text():
        assert (
            error.line is not None and f'"{key}"' in path.read_text().splitlines()[error.line - 1]
        )


def test_a_missing_required_key_is_named_when_the_model_type_gives_no_default(
    tmp_path: Path,
) -> None:
    config = {k: v for k, v in LLAMA_70B_CONFIG.items() if k != "vocab_size"}
    with pytest.raises(InputError) as caught:
        read_architecture(write(tmp_path, {**config, "model_type": "my_own_llm"}))
    assert caught.value.field == "vocab_size" and "missing" in caught.value.message
    # A model_type transformers knows takes its configuration class's default, as
    # transformers does, and the estimate names the key it defaulted.
    arch = read_architecture(write(tmp_path, config))
    assert arch.vocab == 32000 and "vocab_size" in arch.defaulted


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2]", "expected a JSON object"),
        ('{"num_hidden_layers": 1, "num_hidden_layers": 2}', "appears twice"),
        ('{"num_hidden_layers": NaN}', "NaN"),
        ('{"a": ' * 100 + "1" + "}" * 100, "nested more than"),
        ('{"num_hidden_layers": 8' + "0" * 5000 + "}", "too many digits"),
        ("layers = 80", "expected a JSON object"),
        ('{"hidden_size": 8192,', "invalid JSON"),
        ("\x00\x01binary", "binary"),
    ],
)
def test_malformed_files_are_refused_with_the_file_named(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read_architecture(path)
    assert expected in caught.value.message and caught.value.file == str(path)


def test_oversized_file_is_refused_before_parsing(tmp_path: Path) -> None:
    path = write(tmp_path, '{"pad": "' + "x" * (2 * 1024 * 1024) + '"}')
    with pytest.raises(InputError, match="larger than"):
        read_architecture(path)


@pytest.mark.parametrize(
    "value",
    [
        "https://huggingface.co/meta-llama/Llama-3.1-70B/resolve/main/config.json",
        "hf://meta-llama/Llama-3.1-70B",
        "s3://bucket/config.json",
        "//server/share/config.json",
        "\\\\server\\share\\config.json",
    ],
)
def test_remote_locations_are_refused_without_any_network(value: str) -> None:
    with pytest.raises(InputError) as caught:
        size_model(Model(hf_config=value))
    assert caught.value.field == "workload.model.hf_config"
    assert "never downloads" in caught.value.message


def test_not_a_regular_file_is_refused_without_waiting(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="regular file"):
        size_model(Model(hf_config=str(tmp_path)))
    if sys.platform != "win32" and hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.json"
        os.mkfifo(fifo)
        with pytest.raises(InputError, match="regular file"):
            size_model(Model(hf_config="pipe.json"), base_dir=tmp_path)
    with pytest.raises(InputError, match="file not found"):
        size_model(Model(hf_config="missing.json"), base_dir=tmp_path)


def test_parse_of_hostile_values_never_raises_anything_but_input_error() -> None:
    hostile_rope = {**LLAMA_70B_CONFIG, "rope_scaling": {"type": ["yarn"], "factor": 2.0}}
    assert architecture_from_config(hostile_rope, file="c.json").max_positions == 2 * 131072
    for value in (None, 3, "x", [], {"num_hidden_layers": {"a": 1}}, {"text_config": 5}):
        with pytest.raises(InputError):
            architecture_from_config(value, file="c.json")
