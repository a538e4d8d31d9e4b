"""Many decisions in one process (a batch, the web page) share an engine and its caches;
each must still cite its own inputs."""

from __future__ import annotations

import shutil
from pathlib import Path

from gpuadvisor.decision.build import Advisor
from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.rules import load_rules
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.pipeline import advise

REPO = Path(__file__).parent.parent
EVIDENCE = REPO / "examples" / "evidence" / "input-bound-host"
PROFILE = REPO / "examples" / "input-bound-host.toml"


def _cited(decision: Decision) -> set[str]:
    """Every source a finding or fix-first item names, in its facts or its text."""
    cited = set()
    for item in (*decision.fix_first, *decision.findings):
        cited |= {fact.source for fact in item.facts}
        cited.add(item.evidence)
    cited |= {fact.source for fact in decision.measured}
    return cited


def test_two_decisions_with_evidence_from_two_files_each_cite_their_own(
    tmp_path: Path,
) -> None:
    """Monday's and Tuesday's captures hold the same numbers; the second report must
    still name Tuesday's file, never Monday's (a phrasing or fact cache keyed without
    the facts' sources would hand it Monday's)."""
    advisor = Advisor(Engine(load_catalog(), load_rules()))
    decisions = {}
    for day in ("monday", "tuesday"):
        capture = tmp_path / f"{day}-iostat.txt"
        shutil.copy(EVIDENCE / "iostat-x.txt", capture)
        decisions[day] = advise(
            PROFILE,
            evidence=[capture, EVIDENCE / "nvidia-smi-dmon.txt"],
            advisor=advisor,
        )
    for day, other in (("monday", "tuesday"), ("tuesday", "monday")):
        text = " ".join(_cited(decisions[day]))
        assert f"{day}-iostat.txt" in text
        assert f"{other}-iostat.txt" not in text
        assert decisions[day].fix_first, "the example's iostat capture should gate the purchase"
        refs = [ref.file for ref in decisions[day].inputs.evidence]
        assert any(r.endswith(f"{day}-iostat.txt") for r in refs)
        assert not any(r.endswith(f"{other}-iostat.txt") for r in refs)


def test_a_shared_engine_gives_the_decision_a_fresh_engine_gives() -> None:
    """The shared engine's warm memo and phrasebook change nothing in the document."""
    shared = Advisor(Engine(load_catalog(), load_rules()))
    names = ("llm-latency-endpoint", "vdi-many-users", "hyperparameter-sweep")
    warm = [advise(REPO / "examples" / f"{n}.toml", advisor=shared) for n in names * 2]
    for name, decision in zip(names * 2, warm, strict=True):
        fresh = advise(REPO / "examples" / f"{name}.toml")
        assert decision.to_json() == fresh.to_json()
