"""The questionnaire's memory question and the model path it offers: "unknown" leads to
questions about the model, from which gpuadvisor derives the memory need."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.ask import QUESTIONS, Question
from gpuadvisor.ask.model_questions import MODEL_QUESTIONS, memory_gib
from gpuadvisor.inputs.profile import load_profile
from gpuadvisor.pipeline import advise

from .conftest import CliResult
from .test_ask import MINIMAL, run_flow

Cli = Callable[..., CliResult]
INFERENCE = {"workload.kind": "inference", "workload.objective": "latency"}


def test_model_questions_follow_the_memory_question() -> None:
    assert all(isinstance(q, Question) for q in MODEL_QUESTIONS)
    fields = [q.field for q in QUESTIONS]
    start = fields.index("workload.vram_need_gib") + 1
    assert fields[start : start + len(MODEL_QUESTIONS)] == [q.field for q in MODEL_QUESTIONS]


def test_the_memory_question_asks_in_gib_and_no_longer_guesses_from_parameters() -> None:
    vram = next(q for q in QUESTIONS if q.field == "workload.vram_need_gib")
    assert "GiB" in vram.prompt and "describe" in vram.prompt
    assert "per billion parameters" not in vram.why
    for kind in ("training", "inference"):
        flow = run_flow(
            {
                "workload.kind": kind,
                "workload.objective": "throughput",
                "workload.vram_need_gib": "8",
            }
        )
        assert "per billion parameters" not in flow.text


@pytest.mark.parametrize(
    ("typed", "gib"),
    # One unit rule for every memory answer: GB are decimal (40 GB = 37.25 GiB), MiB as
    # nvidia-smi prints them, GiB as they are; conversions to two decimals.
    [("40", 40.0), ("40 GiB", 40.0), ("40 GB", 37.25), ("17,320 MiB", 16.91), ("8g", 7.45)],
)
def test_memory_answers_in_gib_or_in_nvidia_smis_mib(typed: str, gib: float) -> None:
    flow = run_flow({**MINIMAL, "workload.vram_need_gib": typed})
    assert flow.profile.workload.vram_need_gib == pytest.approx(gib)
    assert flow.profile.workload.model is None


def test_memory_still_needs_an_answer() -> None:
    flow = run_flow({**MINIMAL, "workload.vram_need_gib": ["", "12"]})
    assert "  This one needs an answer." in flow.said
    assert memory_gib("Unknown") is None


def test_unknown_memory_leads_to_the_model_and_a_derived_need(tmp_path: Path) -> None:
    flow = run_flow(
        {
            **INFERENCE,
            "workload.vram_need_gib": "unknown",
            "workload.model.name": "Llama-3.1-70B-Instruct",
            "workload.model.precision": "int4",
            "workload.model.context_tokens": "8k",
            "workload.model.concurrent_sequences": "4",
        }
    )
    asked = [f for f in flow.asked if f.startswith("workload.model.")]
    assert asked == [
        "workload.model.family",
        "workload.model.name",
        "workload.model.task",
        "workload.model.precision",
        "workload.model.context_tokens",
        "workload.model.concurrent_sequences",
        "workload.model.kv_cache_precision",
    ]
    workload = flow.profile.workload
    assert workload.vram_need_gib is None
    assert workload.model is not None
    assert (workload.model.context_tokens, workload.model.concurrent_sequences) == (8192, 4)
    path = tmp_path / "p.toml"
    from gpuadvisor.ask import profile_document

    path.write_text(profile_document(flow.profile))
    assert load_profile(path) == flow.profile
    decision = advise(path, sensitivity=False)
    assert decision.sizing.source == "derived" and decision.sizing.vram_need_gib is not None


def test_an_unknown_model_name_is_explained_and_asked_again() -> None:
    flow = run_flow(
        {
            **INFERENCE,
            "workload.vram_need_gib": "unknown",
            "workload.model.name": ["lama-3.1-8b", "llama-3.1-8b"],
        }
    )
    complaint = next(line for line in flow.said if line.startswith("  Not accepted:"))
    assert "did you mean 'llama-3.1-8b'?" in complaint and "qwen2.5-7b" in complaint
    assert flow.profile.workload.model is not None
    assert flow.profile.workload.model.name == "llama-3.1-8b"


def test_a_model_not_in_the_table_is_described_by_its_size() -> None:
    flow = run_flow(
        {
            **INFERENCE,
            "workload.vram_need_gib": "unknown",
            "workload.model.name": "other",
            "workload.model.params_b": ["", "13 billion"],
        }
    )
    assert "  This one needs an answer." in flow.said
    model = flow.profile.workload.model
    assert model is not None and model.params_b == 13.0 and model.name is None
    assert "workload.model.hf_config" in flow.asked and model.hf_config is None


def test_training_suggests_a_method_not_decided_yet_and_asks_the_training_details() -> None:
    """Training suggests "not decided yet" (sized as LoRA, and said so), not a full
    fine-tune: its adapters' rank and the frozen copy's format are asked."""
    flow = run_flow(
        {
            **MINIMAL,
            "workload.vram_need_gib": "unknown",
            "workload.model.name": "qwen2.5-7b",
            "workload.model.batch": "4",
        }
    )
    model = flow.profile.workload.model
    assert model is not None and model.task == "unknown" and model.batch == 4
    assert "  Default: unknown" in flow.said
    labels = [line for line in flow.said if line.strip().startswith("6) unknown")]
    assert len(labels) == 1 and "not decided yet" in labels[0] and "LoRA" in labels[0]
    assert {"workload.model.lora_rank", "workload.model.precision"} <= set(flow.asked)
    assert model.lora_rank == 16 and model.precision == "bf16"
    assert "workload.model.concurrent_sequences" not in flow.asked
    # Checkpointing is not decided either: left open (on for QLoRA, off otherwise), so
    # what would change prices QLoRA as its recipes run it.
    assert "workload.model.activation_checkpointing" in flow.asked
    assert model.activation_checkpointing is None
    full = run_flow(
        {
            **MINIMAL,
            "workload.vram_need_gib": "unknown",
            "workload.model.name": "qwen2.5-7b",
            "workload.model.task": "full-finetune",
        }
    )
    assert full.profile.workload.model is not None
    assert full.profile.workload.model.activation_checkpointing is False
    assert "workload.model.precision" not in full.asked  # full fine-tuning: 16-bit states
    assert "workload.model.lora_rank" not in full.asked


def test_qlora_asks_the_rank_and_suggests_checkpointing() -> None:
    flow = run_flow(
        {
            **MINIMAL,
            "workload.vram_need_gib": "unknown",
            "workload.model.name": "llama-3.1-8b",
            "workload.model.task": "qlora",
        }
    )
    model = flow.profile.workload.model
    assert model is not None
    assert (model.lora_rank, model.activation_checkpointing, model.precision) == (16, True, None)
    assert "workload.model.precision" not in flow.asked


def test_from_a_profile_describing_its_model_the_memory_is_not_asked() -> None:
    start = {
        "workload": {
            "kind": "inference",
            "objective": "throughput",
            "model": {"name": "mistral-7b", "precision": "int4"},
        }
    }
    flow = run_flow({"workload.model.context_tokens": "32k"}, start=start, start_name="p.toml")
    assert "workload.vram_need_gib" not in flow.asked
    assert "workload.model.name" not in flow.asked
    model = flow.profile.workload.model
    assert model is not None and model.context_tokens == 32768 and model.precision == "int4"


def test_ask_writes_the_model_table_end_to_end(cli: Cli, tmp_path: Path) -> None:
    answers = [
        "Chat endpoint",  # meta.title
        "",  # meta.requester
        "inference",  # workload.kind
        "latency",  # workload.objective
        "",  # workload.latency_slo_ms: none
        "yes",  # workload.interactive
        "unknown",  # workload.vram_need_gib
        "",  # workload.model.family: llm
        "mixtral-8x7b",  # workload.model.name
        "",  # workload.model.task: inference
        "int4",  # workload.model.precision
        "16k",  # workload.model.context_tokens
        "2",  # workload.model.concurrent_sequences
        "",  # workload.model.kv_cache_precision: bf16
    ]
    out = tmp_path / "p.toml"
    result = cli("ask", "-o", str(out), "--advise", stdin="\n".join(answers) + "\n" * 40)
    assert result.exit_code == 0, result.stderr
    text = out.read_text()
    assert "\n[workload.model]  # Optional." in text and 'name = "mixtral-8x7b"' in text
    assert "# vram_need_gib =" in text
    assert "## Memory one job needs" in result.stdout
    assert "Mixtral 8x7B, int4 weights, inference, 16,384 tokens × 2 sequences" in result.stdout


def test_ask_advise_reads_hf_config_beside_the_written_profile(cli: Cli, tmp_path: Path) -> None:
    """The written profile's hf_config is relative to the profile, whatever the folder
    `ask` runs in; --advise reads it from there too."""
    from .test_sizing_hfconfig import LLAMA_70B_CONFIG, write

    folder = tmp_path / "profiles"
    folder.mkdir()
    write(folder, LLAMA_70B_CONFIG, "llama.json")
    answers = [
        "",  # meta.title
        "",  # meta.requester
        "inference",  # workload.kind
        "throughput",  # workload.objective
        "",  # workload.interactive: no
        "unknown",  # workload.vram_need_gib
        "",  # workload.model.family: llm
        "other",  # workload.model.name
        "70",  # workload.model.params_b
        "",  # workload.model.active_params_b: none
        "llama.json",  # workload.model.hf_config
    ]
    out = folder / "p.toml"
    result = cli(
        "ask", "-o", str(out), "--advise", "-f", "json", stdin="\n".join(answers) + "\n" * 60
    )
    assert result.exit_code == 0, result.stderr
    sizing = json.loads(result.stdout)["sizing"]
    assert sizing["assumptions"][0].startswith(f"Architecture read from {folder / 'llama.json'}")
    assert sizing["formula"] == advise(out, sensitivity=False).sizing.formula
