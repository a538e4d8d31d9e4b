"""``lint_catalog``: the checks a maintained catalog needs beyond what loading enforces.

Each test writes a small temporary catalog (``load_catalog(base=tmp_path)``) with one
thing wrong and checks that lint names it, and that the same catalog without the fault
lints clean.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.catalog import CITED_FIELDS, Catalog, load_catalog
from gpuadvisor.inputs.catalog_lint import (
    CITE_DENYLIST,
    OPTIONAL_CITED_FIELDS,
    denied_domain,
    lint_catalog,
    lint_warnings,
    review_warnings,
)

TODAY = dt.date(2026, 11, 30)
GOOD = "https://www.nvidia.com/en-us/data-center/example/"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_sku(folder: Path, sku_id: str, **overrides: Any) -> Path:
    """A valid, fully cited SKU file; ``overrides`` replace or add top-level keys.

    ``cite_url`` sets the URL every decision field cites; ``disputes`` and ``lint``
    are tables.
    """
    cite_url = overrides.pop("cite_url", GOOD)
    disputes = overrides.pop("disputes", {})
    acknowledged = overrides.pop("lint", {})
    extra = overrides.pop("extra", [])
    data: dict[str, Any] = {
        "id": sku_id,
        "name": f"NVIDIA Test {sku_id}",
        "vendor": "NVIDIA",
        "segment": "professional",
        "architecture": "Ada Lovelace",
        "vram_gib": 48.0,
        "memory_type": "GDDR6",
        "memory_bandwidth_gbs": 960.0,
        "ecc": True,
        "tdp_w": 300.0,
        "cooling": "blower",
        "slot_width": 2.0,
        "pcie_gen": 4,
        "pcie_lanes": 16,
        "nvlink": False,
        "frame_lock": True,
        "vgpu": True,
        "mig": False,
        "display_outputs": 4,
        "fp32_tflops": 91.1,
        "fp16_tensor_tflops": 364.2,
        "launch_year": 2022,
        "price_usd": 6800.0,
        "price_date": "2026-06-01",
        "price_kind": "list",
        "price_source": GOOD,
        "status": "current",
        "status_date": "2026-06",
        "status_source": GOOD,
        "vgpu_editions": ["vws"],
        "fp64_tflops": 1.4,
        "nvenc": 3,
        "nvdec": 3,
        "av1_decode": True,
        "displays_4k60": 4,
        "displays_8k60": 2,
    }
    data.update(overrides)
    data = {k: v for k, v in data.items() if v is not None}
    sources = list(dict.fromkeys([cite_url, data["price_source"], *extra]))
    data.setdefault("sources", sources)
    lines = [f"{key} = {_toml_value(value)}" for key, value in data.items()]
    lines.append("")
    lines.append("[cite]")
    lines += [f"{name} = {_toml_value(cite_url)}" for name in CITED_FIELDS]
    for name in ("vgpu_editions", "fp64_tflops"):
        if data.get(name):
            lines.append(f"{name} = {_toml_value(cite_url)}")
    if data.get("status"):
        lines.append(f"status = {_toml_value(cite_url)}")
    lines += [f"{n} = {_toml_value(cite_url)}" for n in OPTIONAL_CITED_FIELDS if n in data]
    if acknowledged:
        lines.append("")
        lines.append("[lint]")
        lines += [f'"{code}" = {_toml_value(why)}' for code, why in acknowledged.items()]
    if disputes:
        lines.append("")
        lines.append("[disputes]")
        lines += [f"{key} = {_toml_value(text)}" for key, text in disputes.items()]
    path = folder / f"{sku_id}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def lint(folder: Path) -> list[str]:
    return lint_catalog(load_catalog(base=folder), today=TODAY)


def test_a_well_formed_catalog_lints_clean(tmp_path: Path) -> None:
    write_sku(tmp_path, "good-a")
    write_sku(tmp_path, "good-b")
    assert lint(tmp_path) == []


# ---------------------------------------------------------------- denylisted domains
@pytest.mark.parametrize(
    "url",
    [
        "https://www.ecer.com/corp/details-some-gpu.html",
        "https://grokipedia.com/page/210100120",
        "https://aiwiki.ai/wiki/nvidia_l4",
        "https://ferreiradozezere.net/entretenimento/x/2388/",
        "https://torrentinvites.org/f43/nvidia-announces-ampere/",
        "https://wccftech-com.nproxy.org/nvidia-rtx-5090/",
        "https://www.relationship-nepal.org/900-2g133-0000-000.html",
    ],
)
def test_cite_on_denylisted_domain_is_named(tmp_path: Path, url: str) -> None:
    write_sku(tmp_path, "bad-cite", cite_url=url)
    problems = lint(tmp_path)
    assert len(problems) == 1, problems
    assert "denylisted domain" in problems[0]
    assert denied_domain(url) in problems[0]
    assert "vram_gib" in problems[0]


def test_denylisted_source_that_is_not_cited_is_still_flagged(tmp_path: Path) -> None:
    write_sku(tmp_path, "bad-source", extra=["https://grokipedia.com/page/x"])
    problems = lint(tmp_path)
    assert len(problems) == 1
    assert "grokipedia.com" in problems[0]


def test_denylisted_price_source_is_flagged(tmp_path: Path) -> None:
    write_sku(tmp_path, "bad-price", price_source="https://www.ecer.com/corp/price.html")
    problems = lint(tmp_path)
    assert len(problems) == 1
    assert "price_source" in problems[0]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://ecer.com/x", "ecer.com"),
        ("https://sub.ecer.com/x", "ecer.com"),
        ("https://notecer.com/x", None),
        ("https://docs.nvidia.com/x", None),
        ("https://www.ecer.com.example.org/x", None),
    ],
)
def test_denylist_matches_domain_and_subdomains_only(url: str, expected: str | None) -> None:
    assert denied_domain(url) == expected


def test_every_denylist_entry_says_why() -> None:
    for domain, why in CITE_DENYLIST.items():
        assert "." in domain and domain == domain.lower(), domain
        assert len(why) > 10, domain


# ---------------------------------------------------------------- prices
def test_price_dated_before_launch_is_flagged(tmp_path: Path) -> None:
    write_sku(tmp_path, "early", launch_year=2023, price_date="2022-12-31")
    problems = lint(tmp_path)
    assert problems == ["early: price_date 2022-12-31 is older than the launch year 2023"]


def test_price_dated_in_launch_year_is_fine(tmp_path: Path) -> None:
    write_sku(tmp_path, "same-year", launch_year=2023, price_date="2023-01-01")
    assert lint(tmp_path) == []


def test_price_dated_in_the_future_is_flagged(tmp_path: Path) -> None:
    write_sku(tmp_path, "future", price_date="2026-12-01")
    problems = lint(tmp_path)
    assert len(problems) == 1 and "in the future" in problems[0]


def test_estimate_without_explanation_is_flagged(tmp_path: Path) -> None:
    write_sku(tmp_path, "guess", price_kind="estimate")
    problems = lint(tmp_path)
    assert len(problems) == 1
    assert "estimated price must say how" in problems[0]


def test_estimate_explained_in_disputes_is_fine(tmp_path: Path) -> None:
    write_sku(
        tmp_path,
        "guess-disputed",
        price_kind="estimate",
        disputes={"price_usd": f"Street price of the sibling board, {GOOD}"},
    )
    assert lint(tmp_path) == []


def test_estimate_explained_in_lifecycle_note_is_fine(tmp_path: Path) -> None:
    write_sku(
        tmp_path,
        "guess-noted",
        price_kind="estimate",
        lifecycle_note="Sold only inside OEM servers; price is the generic list price.",
    )
    assert lint(tmp_path) == []


def test_estimate_with_blank_explanation_is_flagged(tmp_path: Path) -> None:
    write_sku(tmp_path, "guess-blank", price_kind="estimate", lifecycle_note="   ")
    assert len(lint(tmp_path)) == 1


def test_price_source_missing_from_sources_is_flagged(tmp_path: Path) -> None:
    write_sku(
        tmp_path,
        "orphan-price",
        price_source="https://www.pny.com/price",
        sources=[GOOD],
    )
    problems = lint(tmp_path)
    assert problems == ["orphan-price: price_source is not listed in sources"]


# ---------------------------------------------------------------- identity
def test_duplicate_ids_are_flagged(tmp_path: Path) -> None:
    write_sku(tmp_path, "twin")
    sku = load_catalog(base=tmp_path).get("twin")
    doubled = Catalog(skus=(sku, sku), version="test")
    problems = lint_catalog(doubled, today=TODAY)
    assert "twin: id used by more than one SKU" in problems


def test_duplicate_names_are_flagged(tmp_path: Path) -> None:
    write_sku(tmp_path, "name-a", name="NVIDIA RTX Same")
    write_sku(tmp_path, "name-b", name="NVIDIA RTX same")
    problems = lint(tmp_path)
    assert problems == ["name-b: name 'NVIDIA RTX same' also used by name-a"]


# ---------------------------------------------------------------- units
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("vram_gib", 0.5),
        ("vram_gib", 600.0),
        ("memory_bandwidth_gbs", 40.0),
        ("memory_bandwidth_gbs", 12_000.0),
        ("tdp_w", 15.0),
        ("tdp_w", 1600.0),
    ],
)
def test_implausible_units_are_flagged(tmp_path: Path, field: str, value: float) -> None:
    write_sku(tmp_path, "odd-units", **{field: value})
    problems = lint(tmp_path)
    assert len(problems) == 1, problems
    assert field in problems[0] and "check units" in problems[0]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("vram_gib", 1.0),
        ("vram_gib", 512.0),
        ("memory_bandwidth_gbs", 50.0),
        ("memory_bandwidth_gbs", 10_000.0),
        ("tdp_w", 20.0),
        ("tdp_w", 1500.0),
    ],
)
def test_unit_bounds_are_inclusive(tmp_path: Path, field: str, value: float) -> None:
    write_sku(tmp_path, "edge-units", **{field: value})
    assert lint(tmp_path) == []


def test_the_bundled_catalog_lints_clean() -> None:
    assert lint_catalog(load_catalog()) == []


# ---------------------------------------------------------------- market reality (#18)
def test_a_sku_without_status_fails_unless_disputes_say_why(tmp_path: Path) -> None:
    write_sku(tmp_path, "no-status", status="", status_date="", status_source=GOOD)
    text = (tmp_path / "no-status.toml").read_text()
    text = text.replace('status = ""\n', "").replace('status_date = ""\n', "")
    (tmp_path / "no-status.toml").write_text(text.replace("status_source = ", "# ", 1))
    assert any("no status" in p for p in lint(tmp_path))
    write_sku(tmp_path, "no-status", disputes={"status": f"No notice found; {GOOD} lists it."})
    text = (tmp_path / "no-status.toml").read_text()
    text = text.replace('status = "current"\n', "").replace('status_date = "2026-06"\n', "")
    (tmp_path / "no-status.toml").write_text(text.replace("status_source = ", "# ", 1))
    assert lint(tmp_path) == []


def test_a_discontinued_sku_needs_the_production_end_date(tmp_path: Path) -> None:
    path = write_sku(tmp_path, "gone", status="discontinued")
    path.write_text(path.read_text().replace('status_date = "2026-06"\n', ""))
    assert lint(tmp_path) == ["gone: a discontinued SKU needs status_date (when production ended)"]


def test_a_current_sku_priced_by_an_old_launch_msrp_fails(tmp_path: Path) -> None:
    write_sku(tmp_path, "stale", price_kind="launch-msrp", price_date="2024-11-29")
    problems = lint(tmp_path)
    assert len(problems) == 1 and "launch MSRP of 2024-11-29" in problems[0], problems
    write_sku(tmp_path, "stale", price_kind="launch-msrp", price_date="2024-12-01")
    assert lint(tmp_path) == []  # 729 days: within two years
    write_sku(
        tmp_path, "stale", price_kind="launch-msrp", price_date="2022-12-03", status="discontinued"
    )
    assert lint(tmp_path) == []  # a discontinued card's launch price is flagged in reports


def test_old_prices_are_warnings_not_failures(tmp_path: Path) -> None:
    from gpuadvisor.inputs.catalog_lint import PRICE_AGE_WARN_DAYS, lint_warnings

    write_sku(tmp_path, "aged", price_date="2025-01-01")
    catalog = load_catalog(base=tmp_path)
    assert lint_catalog(catalog, today=TODAY) == []
    warnings = lint_warnings(catalog, today=TODAY)
    assert warnings == [
        f"aged: list price of 2025-01-01 is 698 days old (over {PRICE_AGE_WARN_DAYS})"
    ]


def test_vgpu_editions_and_fp64_are_required(tmp_path: Path) -> None:
    path = write_sku(tmp_path, "bare")
    text = path.read_text()
    text = text.replace('vgpu_editions = ["vws"]\n', "").replace("fp64_tflops = 1.4\n", "")
    text = "\n".join(ln for ln in text.splitlines() if not ln.startswith(("vgpu_editions", "fp64")))
    path.write_text(text + "\n")
    assert lint(tmp_path) == [
        "bare: no vgpu_editions: list vpc, vws, vcs ([] for none)",
        "bare: no fp64_tflops (double-precision TFLOPS)",
    ]


def test_vgpu_flag_and_editions_must_agree(tmp_path: Path) -> None:
    write_sku(tmp_path, "mixed", vgpu=False)
    assert lint(tmp_path) == ["mixed: vgpu = false but vGPU editions are listed"]
    write_sku(tmp_path, "mixed", vgpu_editions=[])
    assert lint(tmp_path) == ["mixed: vgpu = true but no vGPU edition is listed"]


def test_fp64_above_fp32_is_a_unit_error(tmp_path: Path) -> None:
    write_sku(tmp_path, "units", fp64_tflops=120.0)
    assert lint(tmp_path) == ["units: fp64_tflops above fp32_tflops: check units"]


def test_an_uncited_value_must_be_named_weak(tmp_path: Path) -> None:
    path = write_sku(tmp_path, "weak")
    path.write_text(path.read_text().replace('\necc = "https', '\n# ecc = "https'))
    assert lint(tmp_path) == ["weak: no source cited for ecc"]
    path.write_text(
        path.read_text() + '\n[weak_sources]\necc = "UNVERIFIED: no page read states it."\n'
    )
    assert lint(tmp_path) == []


# ---------------------------------------------------------------- reviewed warnings (#34)
AGED = "2025-01-01"  # 698 days before TODAY: a price-age warning
WHY = "Discontinued card; no dated street price with a public URL was found."


def test_a_reviewed_warning_is_a_note_with_its_reason(tmp_path: Path) -> None:
    write_sku(tmp_path, "aged", price_date=AGED, lint={"price-age": WHY})
    catalog = load_catalog(base=tmp_path)
    assert lint_catalog(catalog, today=TODAY) == []
    assert lint_warnings(catalog, today=TODAY) == []
    (note,) = review_warnings(catalog, today=TODAY)
    assert (note.item, note.code, note.reason) == ("aged", "price-age", WHY)
    assert str(note) == "aged: list price of 2025-01-01 is 698 days old (over 365)"


def test_an_acknowledgement_whose_warning_no_longer_fires_fails(tmp_path: Path) -> None:
    write_sku(tmp_path, "fresh", lint={"price-age": WHY})
    assert lint(tmp_path) == [
        "fresh: lint.price-age acknowledges a warning that no longer fires: remove it"
    ]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"price-age": "ok"}, "say why the warning stays"),
        ({"price-old": WHY}, "price-age"),
    ],
)
def test_an_acknowledgement_needs_a_known_code_and_a_reason(
    tmp_path: Path, table: dict[str, str], message: str
) -> None:
    write_sku(tmp_path, "acked", price_date=AGED, lint=table)
    with pytest.raises(InputError) as caught:
        load_catalog(base=tmp_path)
    text = str(caught.value)
    assert "acked.toml" in text and "lint" in text and message in text, text


def test_an_unknown_status_is_reviewed_by_its_dispute_shown_whole(tmp_path: Path) -> None:
    reason = (
        "No production-end notice and no dated sales statement was found in NVIDIA's, "
        f"PNY's or a distributor's pages; {GOOD} only lists the card for software support."
    )
    assert len(reason) > 120
    write_sku(
        tmp_path,
        "unknown",
        status=None,
        status_date=None,
        status_source=None,
        disputes={"status": reason},
    )
    catalog = load_catalog(base=tmp_path)
    assert lint_catalog(catalog, today=TODAY) == []
    (note,) = review_warnings(catalog, today=TODAY)
    assert note.code == "status-unknown" and note.reason == reason


def test_an_undated_current_status_can_be_reviewed(tmp_path: Path) -> None:
    path = write_sku(tmp_path, "undated", lint={"current-undated": WHY})
    path.write_text(path.read_text().replace('status_date = "2026-06"\n', ""))
    catalog = load_catalog(base=tmp_path)
    assert lint_catalog(catalog, today=TODAY) == []
    assert [w.code for w in review_warnings(catalog, today=TODAY) if w.reviewed] == [
        "current-undated"
    ]


def test_the_bundled_catalog_has_no_unreviewed_warning() -> None:
    catalog = load_catalog()
    assert lint_warnings(catalog) == []
    for warning in review_warnings(catalog):
        assert warning.reason is not None and len(warning.reason) >= 20, warning


def test_catalog_lint_prints_notes_whole_and_a_summary(cli: Any, tmp_path: Path) -> None:
    write_sku(tmp_path, "aged", price_date=AGED, lint={"price-age": WHY})
    write_sku(tmp_path, "open", price_date=AGED)
    result = cli("catalog", "lint", "--catalog", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert f"note: aged: list price of {AGED} is" in result.stderr
    assert f"(reviewed: {WHY})" in result.stderr
    assert f"warning: open: list price of {AGED} is" in result.stderr
    found = review_warnings(load_catalog([tmp_path]))
    unreviewed = sum(1 for w in found if not w.reviewed)
    tally = f"{unreviewed} warning(s), {len(found) - unreviewed} reviewed"
    assert tally in result.stdout and "all sourced and well-formed" in result.stdout


def test_catalog_lint_help_points_at_the_sku_recipe(cli: Any) -> None:
    text = cli("catalog", "lint", "--help").stdout
    assert 'docs/extending.md, "A SKU"' in " ".join(text.split())
    assert "README" not in text
    recipe = (Path(__file__).resolve().parent.parent / "docs" / "extending.md").read_text()
    assert "- **A SKU.**" in recipe


# ---------------------------------------------------------------- video and display figures
@pytest.mark.parametrize("name", OPTIONAL_CITED_FIELDS)
def test_a_stated_video_or_display_figure_cites_its_source(tmp_path: Path, name: str) -> None:
    path = write_sku(tmp_path, "uncited")
    path.write_text(path.read_text().replace(f'\n{name} = "https', f'\n# {name} = "https'))
    assert lint(tmp_path) == [f"uncited: no source cited for {name}"]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"nvdec": 0}, "av1_decode = true on a card with no NVDEC engine"),
        ({"displays_8k60": 4, "displays_4k60": 2}, "more displays at 8K 60 Hz (4)"),
        ({"display_outputs": 0}, "on a card with no display outputs"),
    ],
)
def test_contradicting_video_figures_are_flagged(
    tmp_path: Path, overrides: dict[str, Any], expected: str
) -> None:
    write_sku(tmp_path, "odd", **overrides)
    problems = lint(tmp_path)
    assert len(problems) == 1 and expected in problems[0], problems


def test_video_figures_may_be_unknown(tmp_path: Path) -> None:
    write_sku(
        tmp_path, "unknowns", nvdec=None, av1_decode=None, displays_4k60=None, displays_8k60=None
    )
    sku = load_catalog(base=tmp_path).get("unknowns")
    assert (sku.nvdec, sku.av1_decode, sku.displays_4k60, sku.displays_8k60) == (None,) * 4
    assert lint(tmp_path) == []


def test_catalog_show_lists_reviewed_warnings(cli: Any, tmp_path: Path) -> None:
    write_sku(tmp_path, "aged", price_date=AGED, lint={"price-age": WHY})
    result = cli("catalog", "show", "aged", "--catalog", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert f"reviewed lint warning price-age: {WHY}" in result.stdout
    assert "\nlint " not in result.stdout
