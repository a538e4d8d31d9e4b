"""Captures that used to be misread (issue #15), each pinned on a capture of that exact
shape under tests/fixtures/evidence (where each comes from: its SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.evidence import load_evidence, parse_text
from gpuadvisor.host.schema import HostSnapshot

from .evidence_support import FIXTURES


def _load(name: str) -> HostSnapshot:
    return load_evidence([FIXTURES / name])


# -- encodings --------------------------------------------------------------------------

UTF16 = "table-rtx-2080-super_591.86_windows_powershell-utf16le.txt"


def test_a_powershell_utf16_capture_is_read() -> None:
    """PowerShell 5.1's ``nvidia-smi > table.txt``: UTF-16 LE with a BOM, CRLF."""
    data = (FIXTURES / UTF16).read_bytes()
    assert data[:2] == b"\xff\xfe"
    snapshot = _load(UTF16)
    assert snapshot.sources[0].kind == "nvidia-smi-table"
    [gpu] = snapshot.gpus
    assert (gpu.pci_bus_id, gpu.driver_model, gpu.memory_total_mib) == (
        "00000000:0C:00.0",
        "WDDM",
        8192,
    )
    assert snapshot.driver_version == "591.86"
    assert gpu.processes is not None and len(gpu.processes) == 10
    # The same capture written as UTF-8 reads the same.
    text = data[2:].decode("utf-16-le")
    assert parse_text(text, "t.txt") == parse_text(text.encode("utf-8").decode(), "t.txt")


@pytest.mark.parametrize("encoding", ["utf-16-be", "utf-32-le"])
def test_other_byte_order_marks_are_read(tmp_path: Path, encoding: str) -> None:
    text = (FIXTURES / "seed-smi-L.txt").read_text(encoding="utf-8")
    path = tmp_path / "list.txt"
    path.write_bytes("\ufeff".encode(encoding) + text.encode(encoding))
    assert [g.name for g in load_evidence([path]).gpus] == ["NVIDIA A10", "NVIDIA A10"]


def test_binary_without_a_byte_order_mark_is_refused_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_bytes("GPU 0: NVIDIA A10 (UUID: GPU-1)\n".encode("utf-16-le"))
    with pytest.raises(InputError) as caught:
        load_evidence([path])
    assert "binary" in caught.value.message
    assert caught.value.hint is not None and "Out-File -Encoding utf8" in caught.value.hint
    assert caught.value.exit_code == 2


def test_a_truncated_utf16_capture_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(b"\xff\xfe" + "a\nb\n".encode("utf-16-le") + b"\x00\xd8")  # lone surrogate
    with pytest.raises(InputError, match="not valid UTF-16-LE") as caught:
        load_evidence([path])
    assert caught.value.line == 3


def test_profiles_stay_utf8_only(tmp_path: Path) -> None:
    """TOML and JSON are UTF-8 by their specifications; only captures get BOM decoding."""
    from gpuadvisor.pipeline import read_profile

    path = tmp_path / "p.toml"
    path.write_bytes('schema = "gpuadvisor/profile/v1"\n'.encode("utf-16"))
    with pytest.raises(InputError, match="binary"):
        read_profile(path)
