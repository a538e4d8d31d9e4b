"""Evidence that disagrees (issue #15): two cards at one bus id are kept apart, each GPU
value cites the one file it came from, host/v1 keeps that record through an import, and
the decision carries ``evidence_conflicts`` (CONTRACT §6) for every report to show.

``judge-rtx-a5000-same-bus-q.txt`` is ``judge-rtx-4090-load-q.txt`` (see
test_measured_judgements.py) as another host's card at the same bus id: an RTX A5000
with its own UUID and ECC enabled.
"""

from __future__ import annotations

import json
from pathlib import Path

from gpuadvisor.decision.measured import measured_gpus
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.evidence import dump_snapshot, load_evidence
from gpuadvisor.evidence.merge import different_cards, same_gpu
from gpuadvisor.host.schema import Gpu, HostSnapshot
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.pipeline import advise

from .conftest import FIXTURES as TEST_FIXTURES
from .evidence_support import FIXTURES

GEFORCE = FIXTURES / "judge-rtx-4090-load-q.txt"
A5000 = FIXTURES / "judge-rtx-a5000-same-bus-q.txt"
Q = FIXTURES / "two-gpu-q.txt"
DCGM = FIXTURES / "two-gpu-dcgm.prom"
DMON = FIXTURES / "two-gpu-dmon-violations.txt"
BUS = "00000000:01:00.0"


def test_two_cards_at_one_bus_id_are_kept_apart_and_reported() -> None:
    snapshot = load_evidence([GEFORCE, A5000])
    assert sorted((g.name, g.ecc_mode) for g in snapshot.gpus) == [
        ("NVIDIA GeForce RTX 4090", "disabled"),
        ("NVIDIA RTX A5000", "enabled"),
    ]
    by_field = {c.field: c for c in snapshot.conflicts}
    assert set(by_field) == {f"gpus[{BUS}].name", f"gpus[{BUS}].uuid"}
    name = by_field[f"gpus[{BUS}].name"]
    assert name.gpu == BUS
    assert [(v.file, v.value) for v in name.values] == [
        (str(GEFORCE), "NVIDIA GeForce RTX 4090"),
        (str(A5000), "NVIDIA RTX A5000"),
    ]
    assert any("two different cards" in note for note in snapshot.notes)


def test_one_card_named_two_ways_is_still_one_card() -> None:
    a = Gpu(pci_bus_id=BUS, name="NVIDIA GeForce RTX 3090 Ti")
    assert same_gpu(a, Gpu(pci_bus_id=BUS, name="GeForce RTX 3090 Ti"))  # old drivers
    assert same_gpu(a, Gpu(pci_bus_id=BUS, name="NVIDIA GeForce RTX 3090..."))  # table
    assert different_cards(a, Gpu(pci_bus_id=BUS, name="NVIDIA RTX A5000")) == ["name"]
    masked = "GPU-00000000-0000-0000-0000-000000000000"
    assert same_gpu(Gpu(pci_bus_id=BUS, uuid=masked), Gpu(pci_bus_id=BUS, uuid="GPU-ab"))
    assert not same_gpu(Gpu(pci_bus_id=BUS, serial="1322"), Gpu(pci_bus_id=BUS, serial="1323"))
    assert same_gpu(Gpu(pci_bus_id=BUS, serial="0"), Gpu(pci_bus_id=BUS, serial="1323"))


def test_each_gpu_value_cites_the_one_file_it_came_from() -> None:
    snapshot = load_evidence([Q, DCGM, DMON])
    gpu = snapshot.gpus[0]
    assert gpu.provenance["pcie.width_current"] == str(Q)
    # -q (97 %) and dcgm (91 %) are two moments that disagree (a conflict); dmon's window
    # mean is a different measure and is the one used.
    assert gpu.provenance["utilisation.gpu_pct"] == str(DMON)
    assert [c.field for c in snapshot.conflicts] == ["gpus[00000000:17:00.0].utilisation.gpu_pct"]
    assert gpu.provenance["ecc_errors.aggregate_uncorrectable"] == str(DCGM)
    assert gpu.provenance["samples"] == str(DMON)
    assert gpu.provenance["throttle_reasons.sw_power_cap.fraction"] == str(DMON)
    assert gpu.provenance["throttle_reasons.sw_power_cap.active"] == str(Q)
    assert "throttle_reasons.gpu_idle.fraction" not in gpu.provenance  # never reported
    [table] = measured_gpus(snapshot)[:1]
    cited = {v.name: v.source for v in table.values}
    assert cited["utilisation"] == str(DMON)
    assert cited["temperature"] == str(DMON)
    assert cited["PCIe width"] == str(Q)
    assert table.series_source == str(DMON)
    assert all(
        ", " not in source for name, source in cited.items() if name != "clock-event reasons active"
    )


def test_an_imported_host_file_keeps_which_capture_gave_each_value(tmp_path: Path) -> None:
    host = tmp_path / "host.json"
    host.write_text(dump_snapshot(load_evidence([Q, DCGM])))
    again = load_evidence([host])
    assert again.gpus[0].provenance["utilisation.gpu_pct"] == str(Q)
    assert again.gpus[0].provenance["ecc_errors.aggregate_uncorrectable"] == str(DCGM)
    assert [c.gpu for c in again.conflicts] == ["00000000:17:00.0"]
    # merged with a capture that disagrees, the conflict names the capture, not host.json
    mixed = load_evidence([DCGM, host])
    [conflict] = mixed.conflicts
    assert [v.file for v in conflict.values] == [str(DCGM), str(Q)]


def test_a_conflict_from_an_older_host_file_gets_its_gpu(tmp_path: Path) -> None:
    data = json.loads(dump_snapshot(load_evidence([Q, DCGM])))
    for conflict in data["conflicts"]:
        del conflict["gpu"]
    old = tmp_path / "old-host.json"
    old.write_text(json.dumps(data))
    assert [c.gpu for c in load_evidence([old]).conflicts] == ["00000000:17:00.0"]


def _profile(tmp_path: Path) -> Path:
    path = tmp_path / "profile.toml"
    path.write_text(
        'schema = "gpuadvisor/profile/v1"\n[workload]\nkind = "training"\n'
        'objective = "throughput"\nvram_need_gib = 16\n'
    )
    return path


def test_the_decision_json_carries_the_conflicts_as_the_contract_says(
    tmp_path: Path, test_catalog: Catalog, rulebase: RuleBase
) -> None:
    decision = advise(
        _profile(tmp_path),
        evidence=[GEFORCE, A5000],
        sensitivity=False,
        catalog=test_catalog,
        rules=rulebase,
    )
    data = json.loads(decision.to_json())
    assert data["evidence_conflicts"] == [
        {
            "gpu": BUS,
            "field": "name",
            "values": [
                {"file": str(GEFORCE), "value": "NVIDIA GeForce RTX 4090"},
                {"file": str(A5000), "value": "NVIDIA RTX A5000"},
            ],
        },
        {
            "gpu": BUS,
            "field": "uuid",
            "values": [
                {"file": str(GEFORCE), "value": "GPU-988008fc-0059-17f4-9001-0ab4143e0e63"},
                {"file": str(A5000), "value": "GPU-5b7a11e2-3c4d-8e9f-a0b1-c2d3e4f5a6b7"},
            ],
        },
    ]
    agreeing = advise(
        _profile(tmp_path),
        evidence=[GEFORCE],
        sensitivity=False,
        catalog=test_catalog,
        rules=rulebase,
    )
    assert json.loads(agreeing.to_json())["evidence_conflicts"] == []
    host_wide = advise(
        _profile(tmp_path),
        evidence=[Q, DCGM],
        sensitivity=False,
        catalog=test_catalog,
        rules=rulebase,
    )
    [conflict] = json.loads(host_wide.to_json())["evidence_conflicts"]
    assert (conflict["gpu"], conflict["field"]) == ("00000000:17:00.0", "utilisation.gpu_pct")


BEFORE = TEST_FIXTURES / "schemas" / "host-v1-before-issue-15.json"


def _without_descriptions(node: object, before: object = None) -> object:
    """``node`` without descriptions. Given the node as it was (``before``), an ``enum``
    that only gained values reads as it was: CONTRACT allows adding values (a new
    evidence kind), never removing them."""
    if isinstance(node, dict):
        old = before if isinstance(before, dict) else {}
        found = {
            k: _without_descriptions(v, old.get(k)) for k, v in node.items() if k != "description"
        }
        enum, was = node.get("enum"), old.get("enum")
        if isinstance(enum, list) and isinstance(was, list) and set(was) <= set(enum):
            found["enum"] = was
        return found
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


def test_the_host_v1_schema_changed_only_by_additions() -> None:
    """Every model, field and type of the published host/v1 schema is still there as it
    was; nothing new is required."""
    before = json.loads(BEFORE.read_text())
    now = HostSnapshot.model_json_schema(by_alias=True)
    for name, old in [("HostSnapshot", before), *before["$defs"].items()]:
        new = now if name == "HostSnapshot" else now["$defs"][name]
        for field, spec in old.get("properties", {}).items():
            assert field in new["properties"], f"{name}.{field} was removed"
            assert _without_descriptions(new["properties"][field], spec) == _without_descriptions(
                spec
            ), f"{name}.{field} changed"
        assert set(new.get("required", [])) <= set(old.get("required", [])), name
        assert new.get("additionalProperties") == old.get("additionalProperties"), name
    assert "provenance" in now["$defs"]["Gpu"]["properties"]
    assert "gpu" in now["$defs"]["Conflict"]["properties"]
