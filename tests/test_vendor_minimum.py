"""A software vendor's stated minimum card (issue #30 §2,
``requirements.min_card_memory_gb``) is its own requirement, held to the card's label:
a "24 GB GPU" requirement passes a 24 GB card, of which a process can allocate less."""

from __future__ import annotations

from pathlib import Path

from gpuadvisor.decision.model import Decision
from gpuadvisor.pipeline import advise

_PROFILE = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "visualization"
objective = "fleet-simplicity"
vram_need_gib = 8.0

[requirements]
{requirement}

[platform]
chassis = "workstation"
gpu_count_max = 1
max_gpu_slot_width = 2
psu_headroom_w = 400

[budget]
max_usd = 3000.0
"""


def _advise(tmp_path: Path, requirement: str) -> Decision:
    path = tmp_path / "profile.toml"
    path.write_text(_PROFILE.format(requirement=requirement), encoding="utf-8")
    return advise(path, sensitivity=False)


def test_the_vendor_minimum_is_held_to_the_label(tmp_path: Path) -> None:
    decision = _advise(tmp_path, "min_card_memory_gb = 24")
    assert decision.picks
    for pick in decision.picks:
        assert pick.vram_gib / pick.gpus_per_board >= 24
    # A 24 GB card meets a 24 GB minimum, though less than 24 GiB is usable on it.
    assert any(p.vram_gib == 24 and (p.usable_vram_gib or 0) < 24 for p in decision.picks)
    finding = next(f for f in decision.findings if f.rule == "VRAM-002")
    assert "The vendor asks for a card of at least 24 GB" in finding.rationale
    control = _advise(tmp_path, "")
    assert any(p.vram_gib < 24 for p in control.picks)  # the job alone fits smaller cards
    assert not any(f.rule == "VRAM-002" for f in control.findings)
