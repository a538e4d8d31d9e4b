"""``[workload.model]`` in a profile: vram_need_gib becomes optional when the model is
described, a contradictory or incomplete description names its field and line, and the
published JSON Schema says which of the two a profile needs."""

from __future__ import annotations

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.examples import profile_text, template_text
from gpuadvisor.inputs.profile import PROFILE_SCHEMA, Profile, Workload, _Section, parse_profile
from gpuadvisor.inputs.workload_model import Model

HEAD = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "inference"
objective = "latency"
"""


def test_a_described_model_stands_in_for_the_memory_need() -> None:
    profile = parse_profile(HEAD + '[workload.model]\nname = "llama-3.1-70b"\nprecision = "int4"\n')
    assert profile.workload.vram_need_gib is None
    model = profile.workload.model
    assert model is not None and model.name == "llama-3.1-70b" and model.params_b is None


def test_both_may_be_given() -> None:
    profile = parse_profile(HEAD + "vram_need_gib = 40\n[workload.model]\nparams_b = 70\n")
    assert profile.workload.vram_need_gib == 40.0 and profile.workload.model is not None


def test_neither_is_a_missing_memory_need_with_the_way_out() -> None:
    with pytest.raises(InputError) as caught:
        parse_profile(HEAD, "p.toml")
    assert caught.value.field == "workload.vram_need_gib"
    assert caught.value.message == "required field is missing"
    assert caught.value.hint and "[workload.model]" in caught.value.hint


@pytest.mark.parametrize(
    ("table", "field", "line", "fragment"),
    [
        ("task = 'inference'\n", "workload.model.params_b", None, "required field is missing"),
        ("parms_b = 7\n", "workload.model.parms_b", 6, "unknown key"),
        (
            "params_b = 7\ntask = 'qlora'\nprecision = 'bf16'\n",
            "workload.model.precision",
            8,
            "4 bits",
        ),
        (
            "params_b = 7\ntask = 'pretrain'\nprecision = 'int4'\n",
            "workload.model.precision",
            8,
            "16- or 32-bit",
        ),
        (
            "params_b = 7\nactive_params_b = 9\n",
            "workload.model.active_params_b",
            7,
            "more parameters",
        ),
        ("family = 'diffusion'\nname = 'flux'\n", "workload.model.name", 7, "language models"),
        ("family = 'vision'\n", "workload.model.params_b", None, "required field is missing"),
        ("params_b = 0\n", "workload.model.params_b", 6, "greater than 0"),
        (
            "params_b = 7\ncontext_tokens = 0\n",
            "workload.model.context_tokens",
            7,
            "greater than or equal to 1",
        ),
        ("params_b = 7\nprecision = 'int3'\n", "workload.model.precision", 7, "int3"),
        ("params_b = '7'\n", "workload.model.params_b", 6, "valid number"),
        ("params_b = 7\nhf_config = ''\n", "workload.model.hf_config", 7, "at least 1 character"),
    ],
)
def test_a_bad_description_names_the_field_and_line(
    table: str, field: str, line: int | None, fragment: str
) -> None:
    with pytest.raises(InputError) as caught:
        parse_profile(HEAD + "[workload.model]\n" + table, "p.toml")
    error = caught.value
    assert (error.field, error.file) == (field, "p.toml")
    assert fragment in error.message
    if line is not None:
        assert error.line == line


def test_unknown_key_in_the_model_table_suggests_the_right_one() -> None:
    with pytest.raises(InputError) as caught:
        parse_profile(HEAD + "[workload.model]\nparams_b = 7\nconcurent_sequences = 4\n")
    assert caught.value.hint == "did you mean 'concurrent_sequences'?"


def test_the_model_section_has_the_profiles_number_policy() -> None:
    policy = ("frozen", "extra", "allow_inf_nan", "validate_default", "strict")
    for key in policy:
        assert Model.model_config.get(key) == _Section.model_config.get(key), key


def test_json_schema_says_memory_need_or_model() -> None:
    schema = Profile.model_json_schema(by_alias=True)
    workload = schema["$defs"]["Workload"]
    assert "vram_need_gib" not in workload.get("required", [])
    assert {"required": ["vram_need_gib"]} in workload["anyOf"]
    assert {"required": ["model"]} in workload["anyOf"]
    model = schema["$defs"]["Model"]
    assert "params_b" not in model.get("required", [])
    assert model["anyOf"] == [{"required": [k]} for k in ("params_b", "name", "hf_config")]
    assert Workload.model_json_schema()["anyOf"]


@pytest.mark.parametrize(
    "table",
    [
        'name = "llama-3.1-70b"\nprecision = "int4"\ncontext_tokens = 8192\n',
        'params_b = 13.0\ntask = "qlora"\nlora_rank = 32\nactivation_checkpointing = false\n',
        'hf_config = "models/config.json"\nkv_cache_precision = "fp8"\n',
    ],
)
def test_a_profile_with_a_model_writes_back_as_the_same_profile(table: str) -> None:
    profile = parse_profile(HEAD + "[workload.model]\n" + table)
    text = profile_text(profile)
    assert "[workload.model]" in text and "# [workload.model]" not in text
    assert parse_profile(text) == profile


def test_the_template_shows_the_model_table_commented_out() -> None:
    text = template_text()
    assert "# [workload.model]  # Optional." in text
    assert '# family = "llm"' in text
    assert parse_profile(text).workload.model is None
    assert PROFILE_SCHEMA in text
