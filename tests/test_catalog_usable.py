"""``usable_vram_mib``: the memory a real capture shows one process can allocate.

Optional on every SKU; where it is given it must cite the capture and be plausible (a
card never shows more than its label, nor much less).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.inputs.catalog import load_catalog

from .test_catalog_lint import GOOD, lint, write_sku

CAPTURE = "https://github.com/example/captures/blob/0000000/a10.txt"


def _with_usable(tmp_path: Path, mib: float, *, cited: bool = True) -> None:
    path = write_sku(tmp_path, "card", usable_vram_mib=mib, extra=[CAPTURE])
    if cited:
        with path.open("a", encoding="utf-8") as out:
            out.write(f'usable_vram_mib = "{CAPTURE}"\n')


def test_a_cited_plausible_capture_lints_clean(tmp_path: Path) -> None:
    _with_usable(tmp_path, 46068.0 - 609.0)
    assert lint(tmp_path) == []
    assert load_catalog(base=tmp_path).get("card").usable_vram_mib == 45459.0


def test_an_uncited_capture_is_named(tmp_path: Path) -> None:
    _with_usable(tmp_path, 45459.0, cited=False)
    assert lint(tmp_path) == ["card: usable_vram_mib cites no capture"]


@pytest.mark.parametrize("mib", [48.0, 60000.0])
def test_an_implausible_capture_is_named(tmp_path: Path, mib: float) -> None:
    """48 is GiB written as MiB; 60000 MiB is more than a 48 GiB card has."""
    _with_usable(tmp_path, mib)
    problems = lint(tmp_path)
    assert len(problems) == 1 and "usable_vram_mib" in problems[0], problems


def test_the_field_is_optional(tmp_path: Path) -> None:
    write_sku(tmp_path, "card", price_source=GOOD)
    assert load_catalog(base=tmp_path).get("card").usable_vram_mib is None


def test_bundled_captures_are_below_the_label_and_cited() -> None:
    captured = [s for s in load_catalog().skus if s.usable_vram_mib is not None]
    assert {s.id for s in captured} >= {"geforce-rtx-4090", "l40s", "rtx-a5000"}
    for sku in captured:
        assert sku.usable_vram_mib is not None
        assert sku.usable_vram_mib < sku.vram_gib * 1024
        assert sku.cite["usable_vram_mib"].startswith("https://github.com/")
