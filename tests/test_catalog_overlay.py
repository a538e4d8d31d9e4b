"""Organisation overlays: the documented worked example, and the overlay rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.pipeline import advise

from .conftest import FIXTURES, REPO

ACME = REPO / "examples" / "overlays" / "acme-catalog"
LLM = REPO / "examples" / "llm-latency-endpoint.toml"


def test_documented_overlay_changes_price_and_pick() -> None:
    plain = advise(LLM, sensitivity=False)
    overlaid = advise(LLM, catalog_overlays=[ACME], sensitivity=False)
    assert plain.picks[0].sku != "rtx-6000-ada"
    top = overlaid.picks[0]
    assert (top.sku, top.price_usd, top.price_kind) == ("rtx-6000-ada", 3900.0, "negotiated")
    assert "acme-2026q4" in overlaid.provenance.catalog
    assert all(
        p.sku in {"rtx-6000-ada", "geforce-rtx-4090", "geforce-rtx-5080", "l4"}
        for p in overlaid.picks
    )
    assert "CAT-001" in {f.rule for f in overlaid.findings}


def test_full_entry_overlay_adds_a_sku(tmp_path: Path) -> None:
    source = (FIXTURES / "catalog" / "t-pro-48.toml").read_text()
    (tmp_path / "acme-special.toml").write_text(source.replace('"t-pro-48"', '"acme-special"'))
    catalog = load_catalog([tmp_path], base=FIXTURES / "catalog")
    assert catalog.get("acme-special").vram_gib == 48.0
    assert len(catalog.skus) == len(load_catalog(base=FIXTURES / "catalog").skus) + 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('id = "t-pro-48"\npatch = true\nvram_gib = 64.0\n', "a patch may change only"),
        ('id = "t-pro-4"\npatch = true\nprice_usd = 1.0\n', "unknown SKU id"),
        ('id = "t-pro-48"\npatch = true\nprice_usd = -1.0\n', "greater than 0"),
        ('id = "t-pro-48"\npatch = true\napproved = "yes"\n', "approved"),
    ],
)
def test_bad_patches_are_refused(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "t-pro-48.toml").write_text(text)
    with pytest.raises(InputError, match=message) as caught:
        load_catalog([tmp_path], base=FIXTURES / "catalog")
    assert "t-pro-48.toml" in str(caught.value)
