"""``gpuadvisor size`` and ``[workload.model]`` end to end: the command, the decision's
``sizing`` object, the speed of each pick, and the breakdown in every report format."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pypdf
import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.pipeline import advise
from gpuadvisor.render.report import render

from .conftest import CliResult
from .test_sizing_hfconfig import LLAMA_70B_CONFIG

Cli = Callable[..., CliResult]

HEAD = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "inference"
objective = "latency"
latency_slo_ms = 2000
"""
MODEL = """
[workload.model]
name = "llama-3.1-70b"
precision = "int4"
context_tokens = 8192
"""


@pytest.fixture()
def derived(tmp_path: Path) -> Path:
    path = tmp_path / "derived.toml"
    path.write_text(HEAD + MODEL)
    return path


def test_size_prints_each_term_the_sum_and_the_assumptions(cli: Cli) -> None:
    result = cli("size", "--model", "llama-3.1-70b", "--precision", "int4", "--context", "8192")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("Llama 3.1 70B, int4 weights, inference, 8,192 tokens × 1 sequence")
    for label in ("weights", "KV cache", "activations", "overhead", "total"):
        assert f"  {label}" in out
    assert "weights 37.1 GiB + KV cache 2.5 + activations 0.3 + overhead 3.7 = 43.6 GiB" in out
    assert "KV cache: 2 × 80 layers × 8 KV heads × 128 × 2 bytes (bf16)" in out
    assert "https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json" in out


def test_size_json_is_the_decisions_sizing_object(cli: Cli, derived: Path) -> None:
    result = cli("size", str(derived), "--format", "json")
    assert result.exit_code == 0, result.stderr
    sizing = json.loads(result.stdout)
    assert sizing["source"] == "derived"
    assert list(sizing["breakdown"]) == [
        "weights_gib",
        "kv_cache_gib",
        "activations_gib",
        "gradients_gib",
        "optimizer_gib",
        "overhead_gib",
    ]
    assert sizing["vram_need_gib"] == pytest.approx(sum(sizing["breakdown"].values()), abs=0.02)
    decision = advise(derived, sensitivity=False)
    assert sizing == json.loads(decision.sizing.model_dump_json())


def test_flags_override_the_profile(cli: Cli, derived: Path) -> None:
    longer = json.loads(cli("size", str(derived), "--concurrent", "8", "-f", "json").stdout)
    assert longer["breakdown"]["kv_cache_gib"] == 20.0


def test_a_stated_profile_gives_an_empty_breakdown(cli: Cli, tmp_path: Path) -> None:
    stated = tmp_path / "stated.toml"
    stated.write_text(HEAD + "vram_need_gib = 40\n")
    result = cli("size", str(stated), "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {
        "vram_need_gib": 40.0,
        "source": "stated",
        "breakdown": {},
        "assumptions": [],
        "estimate_gib": None,
        "model": "",
        "formula": "",
    }
    assert "no breakdown" in cli("size", str(stated)).stdout


def test_size_shows_speed_bounds_on_named_cards(cli: Cli) -> None:
    result = cli(
        "size", "--model", "llama-3.1-8b", "--card", "rtx-6000-ada", "--card", "geforce-rtx-3060"
    )
    assert result.exit_code == 0, result.stderr
    # 14.5 GiB read per token (bf16 weights but the input embedding, 4,096 tokens of
    # cache) over 960 GB/s; the 3060's 12 GiB cannot hold the 17.4 GiB the job needs.
    assert "NVIDIA RTX 6000 Ada Generation: at best 16.2 ms per token" in result.stdout
    assert "NVIDIA GeForce RTX 3060 (does not fit: 17.4 GiB > 12): at best" in result.stdout


def test_size_lists_the_model_table(cli: Cli) -> None:
    result = cli("size", "--list-models")
    assert result.exit_code == 0
    assert "deepseek-v3" in result.stdout and "Mixtral 8x7B" in result.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), "describe a model"),
        (("--model", "llama-3.1-7b"), "--model: no model named 'llama-3.1-7b'"),
        (("--model", "llama-3.1-70b", "--params-b", "13"), "--params-b: params_b = 13 disagrees"),
        (("--params-b", "7", "--task", "qlora", "--precision", "bf16"), "--precision: qlora"),
        (("--params-b", "-1"), "--params-b: Input should be greater than 0"),
        (("--task", "lora"), "required: give --params-b, --model or --hf-config"),
        (("--hf-config", "missing.json"), "missing.json: --hf-config: file not found"),
        (("--model", "llama-3.1-8b", "--card", "rtx-6001"), "rtx-6001"),
        (("--model", "llama-3.1-8b", "--task", "lora", "--card", "l4"), "--card: speed bounds"),
    ],
)
def test_bad_input_is_exit_2_naming_the_flag(
    cli: Cli, args: tuple[str, ...], expected: str
) -> None:
    result = cli("size", *args)
    assert result.exit_code == 2, result.stdout
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_a_profile_error_names_the_profile_file_and_line(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(HEAD + '\n[workload.model]\nname = "llama-3.1-70B-typo"\n')
    for command in ("size", "advise"):
        result = cli(command, str(path))
        assert result.exit_code == 2
        assert f"{path}:8: workload.model.name: no model named" in result.stderr, result.stderr


def test_size_writes_atomically_with_output(cli: Cli, tmp_path: Path, derived: Path) -> None:
    out = tmp_path / "sizing.json"
    assert cli("size", str(derived), "-f", "json", "-o", str(out)).exit_code == 0
    assert json.loads(out.read_text())["source"] == "derived"
    refused = cli("size", str(derived), "-o", str(derived))
    assert refused.exit_code == 2 and "would overwrite the input" in refused.stderr


# -- advise with a described model ----------------------------------------------------


def test_a_derived_need_drives_the_decision(derived: Path) -> None:
    decision = advise(derived, sensitivity=False)
    sizing = decision.sizing
    assert sizing.source == "derived"
    assert decision.vram_need_gib == sizing.vram_need_gib == sizing.estimate_gib == 43.59
    assert sizing.formula.endswith("= 43.6 GiB")
    assert all(
        p.vram_per_job_gib is not None and p.vram_per_job_gib >= 43.59 for p in decision.picks
    )
    fit = next(
        f for f in decision.findings if any(v.name == "workload.vram_need_gib" for v in f.facts)
    )
    need = next(v for v in fit.facts if v.name == "workload.vram_need_gib")
    assert need.source == "derived from workload.model"


def test_a_stated_need_wins_and_both_are_shown(tmp_path: Path) -> None:
    both = tmp_path / "both.toml"
    both.write_text(HEAD + "vram_need_gib = 60\n" + MODEL)
    decision = advise(both, sensitivity=False)
    assert decision.vram_need_gib == 60.0
    assert decision.sizing.source == "stated" and decision.sizing.estimate_gib == 43.59
    assert decision.sizing.assumptions[0].startswith(
        "The profile states vram_need_gib = 60 GiB, which the decision uses; the model's "
        "estimate is 43.59 GiB (the stated figure is 38% above it)."
    )
    md = render(decision, "md")
    assert "The profile states 60 GiB, and the decision uses that figure" in md


def test_each_pick_has_speed_bounds_in_its_why_and_the_comparison(derived: Path) -> None:
    decision = advise(derived, sensitivity=False)
    for pick in decision.picks:
        assert pick.speed is not None
        step = pick.speed.decode_ms_per_token
        assert step == pytest.approx(
            37.6 * 2**30 / (pick.memory_bandwidth_gbs * 1e9) * 1e3, rel=0.01
        )
        assert f"Decoding at best {round(step, 1):g} ms per token" in pick.why
        # 8,192 prompt tokens through 70.6 B parameters: no card here reads them in 2 s.
        assert pick.speed.answer_tokens_within_slo == 0
        assert "A full-length prompt alone takes longer than the 2,000 ms target." in pick.why
    md = render(decision, "md")
    assert "| Decode, at best |" in md and "| Full-length prompt, at least |" in md


def test_every_report_format_shows_the_breakdown(derived: Path) -> None:
    decision = advise(derived, sensitivity=False)
    formula = decision.sizing.formula
    md = render(decision, "md")
    assert "## Memory one job needs" in md and formula in md
    page = render(decision, "html")
    assert '<section id="sizing">' in page and formula in page
    pdf = pypdf.PdfReader(io.BytesIO(render(decision, "pdf")))
    text = " ".join(" ".join(p.extract_text().split()) for p in pdf.pages)
    assert "Memory one job needs" in text and "43.6 GiB" in text
    assert json.loads(render(decision, "json"))["sizing"]["formula"] == formula


def test_sizing_is_present_on_every_decision(tmp_path: Path) -> None:
    stated = tmp_path / "stated.toml"
    stated.write_text(HEAD + "vram_need_gib = 20\n")
    data = json.loads(render(advise(stated, sensitivity=False), "json"))
    assert data["sizing"]["source"] == "stated" and data["sizing"]["breakdown"] == {}
    assert all(p["speed"] is None for p in data["picks"])
    Decision.model_validate(data)
    assert "## Memory one job needs" not in render(advise(stated, sensitivity=False), "md")


def test_training_sizes_the_optimizer_and_has_no_speed(tmp_path: Path) -> None:
    path = tmp_path / "train.toml"
    path.write_text(
        '[workload]\nkind = "training"\nobjective = "throughput"\n\n'
        '[workload.model]\nname = "llama-3.1-8b"\ntask = "qlora"\n'
    )
    decision = advise(path, sensitivity=False)
    assert decision.sizing.breakdown["optimizer_gib"] > 0
    assert all(p.speed is None for p in decision.picks)
    assert "QLoRA" in " ".join(decision.sizing.assumptions)


def test_advise_names_the_config_file_and_key(cli: Cli, tmp_path: Path) -> None:
    bad = {**LLAMA_70B_CONFIG, "num_key_value_heads": "eight"}
    text = json.dumps(bad, indent=2)
    (tmp_path / "config.json").write_text(text)
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if "num_key_value_heads" in ln)
    profile = tmp_path / "p.toml"
    profile.write_text(
        '[workload]\nkind = "inference"\nobjective = "latency"\n\n'
        '[workload.model]\nhf_config = "config.json"\nprecision = "int4"\n'
    )
    result = cli("advise", str(profile))
    assert result.exit_code == 2, result.stderr
    assert f"{tmp_path / 'config.json'}:{line}: num_key_value_heads: expected a whole number" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    size = cli("size", str(profile))
    assert size.exit_code == 2 and "num_key_value_heads" in size.stderr
