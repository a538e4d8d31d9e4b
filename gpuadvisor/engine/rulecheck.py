"""What a rule carries besides its condition: the examples it is tested by, the lint a
maintained rule must pass, and the documentation ``rules explain`` serves.

Rules themselves (model, compiling, loading) are :mod:`gpuadvisor.engine.rules`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.rules import Example, Rule, RuleBase
from gpuadvisor.vocabulary import format_value

# -- examples ------------------------------------------------------------------------

#: The facts an example starts from, before its own facts apply: a plain one-card
#: inference profile with no evidence and a catalog whose largest cards are fixed here,
#: so examples never depend on the shipped catalog.
EXAMPLE_BASELINE: dict[str, Value] = {
    "workload.kind": "inference",
    "workload.objective": "throughput",
    "workload.latency_slo_ms": None,
    "workload.interactive": False,
    "workload.vram_need_gib": 16.0,
    "workload.concurrent_jobs": 1,
    "workload.jobs_per_host": 1,
    "workload.parallelism": "none",
    "workload.model_parallel_ready": False,
    "workload.sync_heavy": False,
    "workload.job_hours": 2.0,
    "workload.frame_pacing_critical": False,
    "workload.io_pattern": "local-nvme",
    "workload.small_files": False,
    "workload.gpus_per_job": 1,
    "workload.sharded_data_parallel": False,
    "workload.vram_need_with_headroom_gib": 16.8,
    "workload.shares_cards": True,
    "workload.needs_fp64": False,
    "workload.decode_stream_count": None,
    "workload.decode_codec": None,
    "workload.decode_resolution": None,
    "workload.decode_streams_per_host": None,
    "workload.decode_streams_per_engine": None,
    "workload.decode_codec_name": None,
    "workload.cards_needed_for_io": 0,
    "requirements.ecc": "no",
    "requirements.silent_corruption_unacceptable": False,
    "requirements.certified_drivers": False,
    "requirements.isv_app_count": 0,
    "requirements.display_sync": False,
    "requirements.displays": 0,
    "requirements.display_mode": "any",
    "workload.cards_set_by_need": False,
    "requirements.vgpu": False,
    "requirements.vgpu_edition": "none",
    "requirements.isv_known_apps": "",
    "requirements.isv_known_app_count": 0,
    "requirements.lifecycle_years": 3,
    "requirements.fleet_homogeneity": False,
    "requirements.downtime_cost_per_hour_usd": 0.0,
    "requirements.min_card_memory_gb": None,
    "platform.chassis": "tower",
    "platform.airflow": "open",
    "platform.max_gpu_slot_width": 3,
    "platform.gpu_count_max": 2,
    "platform.psu_headroom_w": 800.0,
    "platform.cpu_sockets": 1,
    "platform.pcie_gen": 4,
    "platform.nvlink_possible": False,
    "platform.gpu_slots_total": 0,
    "platform.circuit_w": 0.0,
    "platform.power_limit_ok": False,
    "platform.hosts": 1,
    "platform.psu_w": 0.0,
    "platform.cpu_w": None,
    "platform.system_w": None,
    "platform.gpu_slots_available": 6.0,
    "platform.host_draw_w": 250.0,
    "platform.gpu_power_available_w": 800.0,
    "platform.gpu_power_budget_w": 720.0,
    "platform.slot_power_w": 75.0,
    "platform.circuit_gpu_budget_w": None,
    "team.multi_gpu_experience": "none",
    "budget.max_usd": 10000.0,
    "budget.electricity_usd_per_kwh": 0.15,
    "host.evidence_present": False,
    "catalog.max_vram_gib": 141.0,
    "catalog.max_consumer_vram_gib": 32.0,
    "catalog.max_professional_vram_gib": 96.0,
    "catalog.approved_list_active": False,
}


@dataclass(frozen=True)
class ExampleResult:
    rule_id: str
    example: str
    expected: str
    passed: bool
    detail: str

    @property
    def test_id(self) -> str:
        return f"{self.rule_id}::{self.example}"


def rule_fires(rule: Rule, facts: Mapping[str, Value]) -> bool:
    """Preference rule: ``when`` is true. Constraint rule: it eliminates the option."""
    if not rule.when.holds(facts):
        return False
    if rule.require is None:
        return True
    return not rule.require.holds((facts, facts, facts))


def run_example(rule: Rule, example: Example) -> ExampleResult:
    facts = {**EXAMPLE_BASELINE, **example.facts}
    fired = rule_fires(rule, facts)
    expected_fire = example.expect == "fire"
    passed = fired == expected_fire
    when_value = rule.when.evaluate(facts)
    detail = f"when = {format_value(when_value)}"
    if rule.require is not None:
        detail += f", require = {format_value(rule.require.evaluate((facts, facts, facts)))}"
    return ExampleResult(rule.id, example.name, example.expect, passed, detail)


def run_examples(rules: Iterable[Rule]) -> list[ExampleResult]:
    return [run_example(rule, ex) for rule in rules for ex in rule.data.examples]


# -- lint ----------------------------------------------------------------------------


def lint_rule(rule: Rule) -> list[str]:
    """What a maintained rule must have beyond loading: the ruff-style self-documentation."""
    problems: list[str] = []
    data = rule.data
    expects = {ex.expect for ex in data.examples}
    if "fire" not in expects:
        problems.append("needs an example that fires")
    if "no-fire" not in expects:
        problems.append("needs an example that does not fire")
    read = set(rule.when.names) | set(rule.require.names if rule.require else ())
    for example in data.examples:
        if not read & set(example.facts):
            problems.append(f"example {example.name!r} sets none of the facts the rule reads")
    if data.effect.fix_first and rule.require is not None:
        problems.append("a constraint rule cannot be a fix-first gate")
    for url in data.references:
        if not url.startswith("https://"):
            problems.append(f"reference {url!r} is not an https:// URL")
    return problems


def lint_rules(base: RuleBase) -> list[str]:
    problems: list[str] = []
    for rule in base.rules:
        problems += [f"{rule.path}: {rule.id}: {p}" for p in lint_rule(rule)]
    for result in run_examples(base.rules):
        if not result.passed:
            problems.append(
                f"{base.get(result.rule_id).path}: {result.test_id}: expected "
                f"{result.expected}, got the opposite ({result.detail})"
            )
    return problems


def rule_doc(rule: Rule) -> dict[str, Any]:
    """The rule's own text, as ``rules explain`` serves it."""
    data = rule.data
    return {
        "id": data.id,
        "title": data.title,
        "category": data.category,
        "severity": data.severity,
        "kind": rule.kind,
        "when": data.when,
        "require": data.require,
        "effect": data.effect.model_dump(by_alias=True),
        "rationale": data.rationale,
        "action": data.action,
        "references": list(data.references),
        "aliases": list(data.aliases),
        "examples": [ex.model_dump() for ex in data.examples],
        "file": rule.path,
    }
