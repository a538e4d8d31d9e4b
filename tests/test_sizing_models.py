"""The estimator's data files: the model table holds together with the parameter counts its
sources publish, names resolve, and every constant carries its source."""

from __future__ import annotations

import pytest

from gpuadvisor.sizing.arch import Architecture
from gpuadvisor.sizing.tables import (
    TRAINING_STATES,
    WEIGHT_FORMATS,
    constants,
    find_model,
    model_table,
    name_key,
)

ENTRIES = model_table().model


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_published_parameter_count_matches_the_architecture(entry: object) -> None:
    """A mistyped layer count, width or head count moves the count by far more than 2%:
    every dimension of the table is checked against the published total this way."""
    from gpuadvisor.sizing.tables import ModelEntry

    assert isinstance(entry, ModelEntry)
    arch = Architecture.of_entry(entry)
    assert arch.total_params / 1e9 == pytest.approx(entry.params_b, rel=0.02)
    if entry.active_params_b is not None:
        assert arch.active_params / 1e9 == pytest.approx(entry.active_params_b, rel=0.03)
    else:
        assert arch.active_params == arch.total_params


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_entries_cite_their_config_and_parameter_count(entry: object) -> None:
    from gpuadvisor.sizing.tables import ModelEntry

    assert isinstance(entry, ModelEntry)
    assert entry.config.startswith("https://huggingface.co/") and entry.config.endswith(
        "/config.json"
    )
    assert entry.params_source.startswith("https://")
    assert entry.heads % entry.kv_heads == 0


def test_the_families_of_the_issue_are_in_the_table() -> None:
    for name in (
        "llama-3.1-8b",
        "llama-3.1-70b",
        "llama-3.1-405b",
        "mistral-7b",
        "mixtral-8x7b",
        "qwen2.5-7b",
        "qwen2.5-14b",
        "qwen2.5-32b",
        "qwen2.5-72b",
        "gemma-2-9b",
        "phi-3-mini",
        "deepseek-v3",
    ):
        assert find_model(name) is not None, name


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("Llama-3.3-70B-Instruct", "llama-3.1-70b"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),  # an alias of the table
        ("MIXTRAL-8X7B", "mixtral-8x7b"),
        ("llama-3.1-7b", None),
    ],
)
def test_names_match_without_case_organisation_or_fine_tune_suffix(
    written: str, meant: str | None
) -> None:
    found = find_model(written)
    assert (found.name if found else None) == meant


def test_names_and_aliases_are_unique_after_normalising() -> None:
    keys = [name_key(k) for e in ENTRIES for k in {name_key(a) for a in (e.name, *e.aliases)}]
    assert len(keys) == len(set(keys))


def test_every_constant_names_its_source() -> None:
    table = constants()
    assert set(WEIGHT_FORMATS) <= set(table.weights)
    assert set(TRAINING_STATES) <= set(table.training)
    for fmt in table.weights.values():
        assert fmt.source.startswith("https://") and fmt.layout
    for states in table.training.values():
        assert states.source.startswith("https://")
    # ZeRO's mixed-precision Adam: 16 bytes per parameter in all.
    assert table.training["mixed_precision_adam"].total_bytes == 16.0
    assert table.training["fp32_adam"].total_bytes == 16.0


def test_group_overheads_are_the_layouts_arithmetic() -> None:
    weights = constants().weights
    assert weights["int4"].bits_per_param == 4 + (16 + 4) / 128
    assert weights["int8"].bits_per_param == 8 + (16 + 8) / 128
    assert weights["nf4"].bits_per_param == pytest.approx(4 + 8 / 64 + 32 / (64 * 256), abs=5e-4)


def test_lora_share_without_architecture_is_the_generous_end_of_the_table() -> None:
    """The 1% assumed for models without an architecture covers rank-16 adapters on every
    dense model of the table (fine-grained mixture-of-experts models adapt more)."""
    share = constants().lora.share_without_architecture
    rank = constants().lora.default_rank
    shares = []
    for entry in ENTRIES:
        arch = Architecture.of_entry(entry)
        shares.append(arch.lora_params(rank) / arch.total_params)
        if not arch.moe:
            assert shares[-1] <= share, entry.name
    assert min(shares) > share / 10
