"""Real config.json files sized the way transformers' own model classes are built from
them: parameter counts within 1% (the measured agreement is in docs/sizing.md) and the
KV cache per token exactly, for every architecture of tests/fixtures/hfconfig/.

The reference numbers were produced once with transformers on the meta device
(tests/fixtures/hfconfig/README.md); transformers is not imported here or by gpuadvisor.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.inputs.textio import parse_toml
from gpuadvisor.sizing.hfconfig import read_architecture

from .conftest import REPO

FIXTURES = Path(__file__).parent / "fixtures" / "hfconfig"
REFERENCE: dict[str, Any] = parse_toml((FIXTURES / "reference.toml").read_text(), "reference")
ROWS: list[dict[str, Any]] = REFERENCE["model"]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["file"].removesuffix(".json"))
def test_parameter_count_agrees_with_transformers_within_one_percent(row: dict[str, Any]) -> None:
    arch = read_architecture(FIXTURES / row["file"])
    assert arch.total_params == pytest.approx(row["params"], rel=0.01), (
        f"{row['file']}: {arch.total_params:,} parameters, transformers {row['params']:,}"
    )


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["file"].removesuffix(".json"))
def test_kv_cache_per_token_is_transformers_own(row: dict[str, Any]) -> None:
    arch = read_architecture(FIXTURES / row["file"])
    expected = row.get("kv_bytes_served", row["kv_bytes_per_token"])
    assert arch.kv_values_per_token * 2 == expected, row["file"]


def test_the_table_covers_the_architectures_the_issue_names() -> None:
    types = {row["model_type"] for row in ROWS}
    assert len(types) >= 12, types
    wanted = {"llama", "mistral", "mixtral", "qwen2", "gemma", "gemma2", "phi3", "falcon"}
    assert wanted | {"gpt2", "gpt_neox", "opt", "deepseek_v2", "deepseek_v3"} <= types
    for row in ROWS:
        assert row["config"].startswith("https://huggingface.co/") and row["copied_from"]
    assert REFERENCE["transformers"] and REFERENCE["torch"]


def test_falcon_7b_multi_query_shares_one_kv_head() -> None:
    """multi_query = true: one key/value head for the 71 query heads (the file's
    num_kv_heads = 71 is what transformers ignores then), not 71 of them."""
    arch = read_architecture(FIXTURES / "falcon-7b-instruct.json")
    assert (arch.heads, arch.kv_heads, arch.head_dim) == (71, 1, 64)
    assert arch.kv_values_per_token * 2 == 8192  # 2 x 32 layers x 1 x 64 x 2 bytes
    assert arch.total_params == 6_921_720_704


def test_falcon_40b_new_decoder_architecture_reads_num_kv_heads() -> None:
    arch = read_architecture(FIXTURES / "falcon-40b-instruct.json")
    assert (arch.kv_heads, arch.norms_per_layer) == (8, 2)


def test_an_omitted_key_takes_its_architectures_default() -> None:
    """Gemma-2's config.json has no tie_word_embeddings: Gemma2Config's default (tied)."""
    gemma2 = read_architecture(FIXTURES / "gemma-2-9b-it.json")
    assert gemma2.tied_embeddings and "tie_word_embeddings" in gemma2.defaulted
    mixtral = read_architecture(FIXTURES / "mixtral-8x7b-v0.1.json")
    assert not mixtral.tied_embeddings  # MixtralConfig's default: untied


def test_no_module_imports_transformers() -> None:
    """The reference was made with transformers once; neither gpuadvisor nor a test may
    depend on it."""
    pattern = re.compile(r"^\s*(import transformers|from transformers\b)", re.MULTILINE)
    for folder in ("gpuadvisor", "tests"):
        for path in (REPO / folder).rglob("*.py"):
            assert not pattern.search(path.read_text(encoding="utf-8")), path
