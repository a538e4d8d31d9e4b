"""host/v1 JSON: schema, deterministic output, round trip, immutability."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from gpuadvisor.evidence import detect, dump_snapshot, load_evidence, parse_text
from gpuadvisor.host.schema import HOST_SCHEMA, Event, Gpu, HostSnapshot

from .evidence_support import FIXTURES

FILES = [
    FIXTURES / "two-gpu-q.txt",
    FIXTURES / "two-gpu-dcgm.prom",
    FIXTURES / "two-gpu-topo-nvlink-nic.txt",
    FIXTURES / "seed-dmesg-T-xid31-bus.log",
    FIXTURES / "seed-lscpu.txt",
]


def test_json_schema_is_generated() -> None:
    schema = HostSnapshot.model_json_schema()
    assert {"schema", "sources", "gpus", "topology", "events", "host", "conflicts"} <= set(
        schema["properties"]
    )
    assert "class" in schema["$defs"]["Event"]["properties"]
    json.dumps(schema)


def test_dump_is_deterministic_and_keyed_as_the_contract_says() -> None:
    first = dump_snapshot(load_evidence(FILES))
    assert first == dump_snapshot(load_evidence(FILES))
    data = json.loads(first)
    assert list(data)[:4] == ["schema", "sources", "driver_version", "cuda_version"]
    assert data["schema"] == HOST_SCHEMA
    gpu = data["gpus"][0]
    for key in (
        "index",
        "name",
        "uuid",
        "pci_bus_id",
        "memory_total_mib",
        "memory_used_mib",
        "ecc_mode",
    ):
        assert key in gpu
    assert set(gpu["pcie"]) >= {"gen_current", "gen_max", "width_current", "width_max"}
    # An Xid carries its class; a lost GPU (the "fallen off the bus" line) has no Xid, so none.
    assert {(e["kind"], e["class"]) for e in data["events"]} == {
        ("xid", "hardware"),
        ("xid", "application"),
        ("gpu-lost", None),
    }
    assert first.endswith("\n")


def test_unreported_values_are_null_not_zero() -> None:
    data = json.loads(dump_snapshot(load_evidence([FIXTURES / "seed-smi-L.txt"])))
    gpu = data["gpus"][0]
    assert gpu["memory_total_mib"] is None
    assert gpu["pcie"]["width_current"] is None
    assert gpu["processes"] is None


def test_round_trip_through_host_json(tmp_path: Path) -> None:
    snapshot = load_evidence(FILES)
    text = dump_snapshot(snapshot)
    assert detect(text) == "gpuadvisor-host"
    assert parse_text(text, "host.json") == snapshot
    saved = tmp_path / "host.json"
    saved.write_text(text)
    again = load_evidence([saved])
    assert again.sources[0].kind == "gpuadvisor-host"
    assert again.gpus == snapshot.gpus
    assert again.events == snapshot.events
    # The earlier import's provenance travels with it.
    assert set(again.provenance["gpus.pcie"]) == {str(FILES[0]), str(saved)}


def test_models_are_frozen_and_strict() -> None:
    gpu = Gpu(index=0)
    with pytest.raises(ValidationError):
        gpu.index = 1
    with pytest.raises(ValidationError):
        Gpu.model_validate({"index": 0, "colour": "green"})
    with pytest.raises(ValidationError):
        Gpu.model_validate({"fan_pct": float("inf")})
    with pytest.raises(ValidationError):
        Gpu.model_validate({"pci_bus_id": "17:00.0"})  # canonical form only


def test_event_class_accepts_alias_and_name() -> None:
    assert Event(kind="xid", text="x", xid_class="driver").xid_class == "driver"
    parsed = Event.model_validate({"kind": "xid", "text": "x", "class": "hardware"})
    assert parsed.model_dump(by_alias=True)["class"] == "hardware"
