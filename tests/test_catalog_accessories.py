"""Accessories (issue #30): sync boards and NVLink bridges as cited, priced catalog items.

Each test writes a small catalog (two SKUs from ``write_sku`` and accessory files under
``accessories/``) and checks loading, overlays and lint; the bundled accessories are
held to the same rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.accessories import ACCESSORY_CITED_FIELDS
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.catalog_lint import lint_catalog, lint_warnings, review_warnings

from .test_catalog_lint import GOOD, TODAY, _toml_value, write_sku


def write_accessory(folder: Path, item_id: str, **overrides: Any) -> Path:
    """A valid, cited sync board for the SKU ``pro``; ``overrides`` replace keys."""
    acknowledged = overrides.pop("lint", {})
    data: dict[str, Any] = {
        "id": item_id,
        "name": f"NVIDIA Test Sync {item_id}",
        "vendor": "NVIDIA",
        "kind": "sync-board",
        "fits": ["pro"],
        "cards_per_unit": 4,
        "price_usd": 950.0,
        "price_date": "2026-06-01",
        "price_kind": "street",
        "price_source": GOOD,
        "sources": [GOOD],
    }
    data.update(overrides)
    data = {k: v for k, v in data.items() if v is not None}
    lines = [f"{key} = {_toml_value(value)}" for key, value in data.items()]
    lines += ["", "[cite]"]
    lines += [f"{n} = {_toml_value(GOOD)}" for n in ACCESSORY_CITED_FIELDS if n in data]
    if acknowledged:
        lines += ["", "[lint]"]
        lines += [f'"{code}" = {_toml_value(why)}' for code, why in acknowledged.items()]
    sub = folder / "accessories"
    sub.mkdir(exist_ok=True)
    path = sub / f"{item_id}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def base(tmp_path: Path) -> Path:
    folder = tmp_path / "base"
    folder.mkdir()
    write_sku(folder, "pro", nvlink=True)
    write_sku(folder, "plain", frame_lock=False)
    return folder


def test_an_accessory_loads_into_the_catalog_and_lints_clean(base: Path) -> None:
    write_accessory(base, "sync-x")
    write_accessory(
        base, "bridge-2", kind="nvlink-bridge", cards_per_unit=2, slot_spacing=2, price_usd=90.0
    )
    catalog = load_catalog(base=base)
    assert [a.id for a in catalog.accessories] == ["bridge-2", "sync-x"]
    sync = catalog.accessories[1]
    assert (sync.kind, sync.fits, sync.cards_per_unit, sync.slot_spacing) == (
        "sync-board",
        ("pro",),
        4,
        None,
    )
    assert lint_catalog(catalog, today=TODAY) == []
    assert lint_warnings(catalog, today=TODAY) == []


def test_a_catalog_without_accessories_has_none(base: Path) -> None:
    assert load_catalog(base=base).accessories == ()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"kind": "nvlink-bridge"}, "states its slot_spacing"),
        ({"slot_spacing": 2}, "a sync-board has none"),
        ({"kind": "hdmi-splitter"}, "kind"),
        ({"fits": ["pro", "pro"]}, "more than once"),
        ({"price_usd": None}, "needs price_usd"),
        ({"cards_per_unit": "4"}, "cards_per_unit"),
    ],
)
def test_a_malformed_accessory_is_refused_naming_its_file(
    base: Path, overrides: dict[str, Any], message: str
) -> None:
    write_accessory(base, "bad", **overrides)
    with pytest.raises(InputError) as caught:
        load_catalog(base=base)
    text = str(caught.value)
    assert "bad.toml" in text and message in text, text


def test_an_accessory_for_an_unknown_sku_is_refused_with_its_line(base: Path) -> None:
    write_accessory(base, "typo", fits=["pr0"])
    with pytest.raises(InputError) as caught:
        load_catalog(base=base)
    error = caught.value
    assert "typo.toml" in str(error) and "unknown SKU 'pr0'" in str(error)
    assert error.line == 5 and "pro" in (error.hint or "")


def test_an_accessory_named_unlike_its_file_is_refused(base: Path) -> None:
    path = write_accessory(base, "one")
    path.rename(path.with_name("two.toml"))
    with pytest.raises(InputError, match=r"name the file one\.toml"):
        load_catalog(base=base)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"fits": ["plain"]}, "sync-x: fits plain, which the catalog says has no frame lock"),
        (
            {"kind": "nvlink-bridge", "slot_spacing": 3, "fits": ["plain"]},
            "sync-x: fits plain, which the catalog says has no NVLink",
        ),
        ({"price_date": "2027-01-01"}, "sync-x: price_date 2027-01-01 is in the future"),
        (
            {"price_source": "https://www.ecer.com/x.html"},
            "sync-x: source on denylisted domain ecer.com",
        ),
    ],
)
def test_accessory_lint_problems(base: Path, overrides: dict[str, Any], expected: str) -> None:
    write_accessory(base, "sync-x", **overrides)
    problems = lint_catalog(load_catalog(base=base), today=TODAY)
    assert len(problems) >= 1 and problems[0].startswith(expected), problems


def test_an_uncited_accessory_value_is_a_lint_problem(base: Path) -> None:
    path = write_accessory(base, "sync-x")
    text = path.read_text()
    assert f'[cite]\nfits = "{GOOD}"' in text
    path.write_text(text.replace(f'[cite]\nfits = "{GOOD}"', "[cite]"))
    assert lint_catalog(load_catalog(base=base), today=TODAY) == [
        "sync-x: no source cited for fits"
    ]


def test_an_unpriced_accessory_warns_until_reviewed(base: Path) -> None:
    write_accessory(
        base, "sync-x", price_usd=None, price_date=None, price_source=None, price_kind=None
    )
    catalog = load_catalog(base=base)
    assert catalog.accessories[0].price_kind == "quote-needed"
    assert lint_warnings(catalog, today=TODAY) == ["sync-x: no dated price: it is priced on quote"]
    why = "No dated price with a public URL was found; ask the reseller."
    write_accessory(
        base,
        "sync-x",
        price_usd=None,
        price_date=None,
        price_source=None,
        price_kind=None,
        lint={"unpriced": why},
    )
    catalog = load_catalog(base=base)
    assert lint_warnings(catalog, today=TODAY) == []
    assert [w.reason for w in review_warnings(catalog, today=TODAY)] == [why]


def test_an_old_accessory_price_warns(base: Path) -> None:
    write_accessory(base, "sync-x", price_date="2024-06-01")
    assert lint_warnings(load_catalog(base=base), today=TODAY) == [
        "sync-x: street price of 2024-06-01 is 912 days old (over 365)"
    ]


# ---------------------------------------------------------------- overlays
def test_an_overlay_patches_an_accessory_price_as_negotiated(base: Path, tmp_path: Path) -> None:
    write_accessory(base, "sync-x")
    overlay = tmp_path / "org"
    (overlay / "accessories").mkdir(parents=True)
    (overlay / "accessories" / "our-price.toml").write_text(
        'id = "sync-x"\npatch = true\nprice_usd = 700.0\nprice_date = "2026-10-01"\n'
        f'price_source = "{GOOD}"\n'
    )
    item = load_catalog([overlay], base=base).accessories[0]
    assert (item.price_usd, item.price_kind, item.fits) == (700.0, "negotiated", ("pro",))


def test_an_overlay_patch_may_not_change_what_an_accessory_fits(base: Path, tmp_path: Path) -> None:
    write_accessory(base, "sync-x")
    overlay = tmp_path / "org"
    (overlay / "accessories").mkdir(parents=True)
    (overlay / "accessories" / "p.toml").write_text(
        'id = "sync-x"\npatch = true\nfits = ["plain"]\n'
    )
    with pytest.raises(InputError) as caught:
        load_catalog([overlay], base=base)
    assert "p.toml" in str(caught.value) and caught.value.line == 3


def test_an_overlay_adds_a_full_accessory_entry(base: Path, tmp_path: Path) -> None:
    overlay = tmp_path / "org"
    overlay.mkdir()
    write_accessory(overlay, "own-bridge", kind="nvlink-bridge", cards_per_unit=2, slot_spacing=3)
    catalog = load_catalog([overlay], base=base)
    assert [a.id for a in catalog.accessories] == ["own-bridge"]


def test_a_patch_in_the_base_catalog_is_refused(base: Path) -> None:
    write_accessory(base, "sync-x")
    (base / "accessories" / "p.toml").write_text('id = "sync-x"\npatch = true\n')
    with pytest.raises(InputError, match="belongs in an overlay"):
        load_catalog(base=base)


# ---------------------------------------------------------------- bundled data
def test_the_bundled_accessories_are_cited_and_fit_capable_cards() -> None:
    catalog = load_catalog()
    kinds = {a.kind for a in catalog.accessories}
    assert kinds == {"sync-board", "nvlink-bridge"}, kinds
    skus = {s.id: s for s in catalog.skus}
    for item in catalog.accessories:
        assert set(ACCESSORY_CITED_FIELDS) - {"slot_spacing"} <= set(item.cite), item.id
        for sku_id in item.fits:
            sku = skus[sku_id]
            assert sku.frame_lock if item.kind == "sync-board" else sku.nvlink, (item.id, sku_id)
