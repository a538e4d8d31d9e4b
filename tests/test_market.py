"""Market and catalog reality (#18): what can be bought, at what price, under which licence.

Each test pins one promise of the issue: discontinued cards out of long purchases, vGPU
editions and encoders for desktops, FP64 for double-precision solvers, unpriced cards kept
as quote-needed candidates, ISV lists (an organisation's own through an overlay), and the
catalog list filters.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.decision.build import shown_options
from gpuadvisor.decision.model import Decision
from gpuadvisor.decision.words import pick_flags
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.options import generate_options
from gpuadvisor.engine.policy import bundled_policy
from gpuadvisor.engine.ranking import rank_options
from gpuadvisor.engine.rules import RuleBase
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.catalog import Catalog, Sku, load_catalog
from gpuadvisor.inputs.profile import parse_profile
from gpuadvisor.pipeline import advise

from .conftest import DECISION_DATE, REPO

EXAMPLES = REPO / "examples"
BUNDLED = load_catalog()


def _decide(name: str, rules: RuleBase, overlays: tuple[Path, ...] = ()) -> Decision:
    catalog = load_catalog(list(overlays)) if overlays else BUNDLED
    return advise(EXAMPLES / f"{name}.toml", catalog=catalog, rules=rules, sensitivity=False)


# -- done when: no discontinued card for three years or more ----------------------------


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.stem)
def test_no_bundled_example_picks_a_card_no_longer_made_for_a_long_life(
    path: Path, rulebase: RuleBase
) -> None:
    decision = advise(path, catalog=BUNDLED, rules=rulebase, sensitivity=False)
    profile = parse_profile(path.read_text(encoding="utf-8"), str(path))
    long_life = profile.requirements.lifecycle_years >= 3
    if long_life or profile.requirements.fleet_homogeneity:
        assert all(p.status not in ("discontinued", "eol") for p in decision.picks), [
            (p.sku, p.status) for p in decision.picks
        ]


def test_a_short_life_keeps_a_discontinued_card_and_flags_it(rulebase: RuleBase) -> None:
    text = (EXAMPLES / "dual-socket-ddp.toml").read_text(encoding="utf-8")
    short = parse_profile(
        text.replace("[platform]", "[requirements]\nlifecycle_years = 2\n\n[platform]")
    )
    facts = build_facts(short, BUNDLED)
    options = [
        o
        for o in generate_options(BUNDLED.skus, facts.values, bundled_policy())
        if o.sku.id == "geforce-rtx-4090"
    ]
    from gpuadvisor.engine.core import Engine

    core = Engine(BUNDLED, rulebase).run(facts.values)
    eliminated_4090 = [
        v.rule_id
        for v in core.verdicts
        for i, o in enumerate(core.options.options)
        if o.sku.id == "geforce-rtx-4090" and v.mask >> i & 1
    ]
    assert options and "LIFE-002" not in eliminated_4090


def test_the_discontinued_flag_names_the_production_end() -> None:
    decision = _example_with_4090()
    flags = pick_flags(decision)
    assert flags[0] == (
        "Production ended 2024-10: remaining stock only; spares or identical cards later "
        "mean the used market (second-hand, without the maker's warranty, at a price the "
        "catalog does not know)."
    )
    assert any("launch MSRP of 2022-09-20" in f for f in flags)


def _example_with_4090():  # type: ignore[no-untyped-def]
    from gpuadvisor.decision.purchase import PickContext, make_pick
    from gpuadvisor.engine.option import Option

    sku = BUNDLED.get("geforce-rtx-4090")
    facts = build_facts(
        parse_profile(
            '[workload]\nkind = "training"\nobjective = "throughput"\nvram_need_gib = 20.0\n'
        ),
        BUNDLED,
    ).values
    option = Option("single-larger-gpu", sku, 1, sku.vram_gib, 1)
    ctx = PickContext(facts, bundled_policy(), [option], as_of=DECISION_DATE)
    return make_pick(option, 1, ctx)


# -- done when: designers' VDI never on a compute-only card; FP64 need gets FP64 parts ---


def test_vdi_for_designers_never_picks_a_compute_only_card(rulebase: RuleBase) -> None:
    decision = _decide("vdi-many-users", rulebase)
    assert decision.picks
    for pick in (*decision.picks, *(a.best for a in decision.alternatives if a.best)):
        assert "vws" in pick.vgpu_editions, pick.sku
    assert all(BUNDLED.get(p.sku).nvenc != 0 for p in decision.picks)
    assert "vWS licences" in decision.picks[0].why


def test_an_fp64_need_picks_fp64_parts_and_says_why(rulebase: RuleBase) -> None:
    decision = _decide("cfd-double-precision", rulebase)
    assert decision.picks
    for pick in decision.picks:
        sku = BUNDLED.get(pick.sku)
        assert pick.fp64_tflops is not None and pick.fp64_tflops >= sku.fp32_tflops / 4
    fp64 = next(f for f in decision.findings if f.rule == "FP64-001")
    assert "1/64" in fp64.rationale
    assert any("FP64-001" in r.because for r in decision.rejected)


# -- done when: unpriced SKUs appear as candidates marked quote-needed -------------------


def _unpriced(sku: Sku) -> Sku:
    data = sku.model_dump()
    for key in ("price_usd", "price_date", "price_source"):
        data[key] = None
    data["price_kind"] = "quote-needed"
    return Sku.model_validate(data)


def test_a_sku_without_a_price_loads_as_quote_needed() -> None:
    data = BUNDLED.get("a16").model_dump()
    assert data["price_kind"] == "quote-needed" and data["price_usd"] is None
    del data["price_kind"]
    assert Sku.model_validate(data).price_kind == "quote-needed"
    with pytest.raises(ValueError, match="needs price_usd"):
        Sku.model_validate({**data, "price_kind": "list"})
    with pytest.raises(ValueError, match="drop price_usd"):
        Sku.model_validate({**data, "price_kind": "quote-needed", "price_usd": 10.0})


def test_unpriced_options_rank_after_priced_ones_of_their_tier_by_spec(
    test_catalog: Catalog,
) -> None:
    skus = tuple(_unpriced(s) if s.id in ("t-pro-48", "t-pro-96") else s for s in test_catalog.skus)
    profile = parse_profile(
        '[workload]\nkind = "cad-cae"\nobjective = "correctness"\nvram_need_gib = 20.0\n'
    )
    facts = build_facts(profile, Catalog(skus=skus, version="t")).values
    singles = [
        o for o in generate_options(skus, facts, bundled_policy()) if o.shape == "single-larger-gpu"
    ]
    ranked = rank_options(
        [o for o in singles if o.sku.segment == "professional"], facts, bundled_policy()
    )
    assert [o.sku.id for o in ranked] == ["t-pro-24", "t-pro-96", "t-pro-48"]
    assert [o.sku.id for _, o in shown_options(tuple(ranked[:1] * 3 + ranked[1:]))][
        -1
    ] == "t-pro-96"


def test_a_quote_needed_pick_is_shown_with_its_budget_unchecked(rulebase: RuleBase) -> None:
    decision = _decide("vdi-many-users", rulebase)
    quoted = [p for p in decision.picks if p.price_kind == "quote-needed"]
    assert quoted, [(p.sku, p.price_kind) for p in decision.picks]
    pick = quoted[0]
    assert pick.price_usd is None and pick.total_price_usd is None
    assert pick.lifecycle_cost_usd is None and pick.price_age_days is None
    assert "price on quote (budget not checked)" in pick.why
    assert "Budget not checked: price on quote." in " ".join(pick_flags(pick))


def test_price_age_counts_to_the_decision_date(rulebase: RuleBase) -> None:
    decision = _decide("dual-socket-ddp", rulebase)
    top = decision.picks[0]
    assert top.price_date is not None
    assert top.price_age_days == (DECISION_DATE - dt.date.fromisoformat(top.price_date)).days


# -- ISV lists --------------------------------------------------------------------------

FLUENT = """
[workload]
kind = "simulation"
objective = "correctness"
vram_need_gib = 30.0
[requirements]
certified_drivers = true
isv_apps = ["Ansys Fluent", "SOLIDWORKS"]
[platform]
chassis = "workstation"
psu_headroom_w = 600
max_gpu_slot_width = 2
[budget]
max_usd = 12000.0
"""


def test_an_organisations_isv_list_admits_only_its_cards(
    tmp_path: Path, rulebase: RuleBase
) -> None:
    profile = tmp_path / "fluent.toml"
    profile.write_text(FLUENT, encoding="utf-8")
    overlay = EXAMPLES / "overlays" / "acme-isv"
    listed = advise(profile, catalog=load_catalog([overlay]), rules=rulebase, sensitivity=False)
    assert {p.sku for p in listed.picks} <= {"rtx-pro-5000-blackwell", "rtx-6000-ada"}
    assert any(f.rule == "CERT-003" for f in listed.findings)
    assert any(a.startswith("Check SOLIDWORKS's certified list") for a in listed.assumptions)
    plain = advise(profile, catalog=BUNDLED, rules=rulebase, sensitivity=False)
    assert not any(f.rule == "CERT-003" for f in plain.findings)
    assert any(a.startswith("Check Ansys Fluent's certified list") for a in plain.assumptions)


def test_application_names_match_across_case_and_accents(
    rulebase: RuleBase, tmp_path: Path
) -> None:
    profile = tmp_path / "chem.toml"
    profile.write_text(
        FLUENT.replace('["Ansys Fluent", "SOLIDWORKS"]', '["schrodinger QSite"]')
        .replace('chassis = "workstation"', 'chassis = "rack-2u"\nairflow = "front-to-back"')
        .replace("12000.0", "60000.0")
        .replace("certified_drivers = true", "certified_drivers = true\nlifecycle_years = 2"),
        encoding="utf-8",
    )
    decision = advise(profile, catalog=BUNDLED, rules=rulebase, sensitivity=False)
    assert decision.picks and {p.sku for p in decision.picks} <= {
        "a100-80gb-pcie",
        "rtx-a4000",
        "rtx-a5000",
    }


# -- the profile and the catalog list ----------------------------------------------------


def test_a_vgpu_edition_without_vgpu_is_refused() -> None:
    with pytest.raises(InputError, match="vgpu_edition = 'vws' needs vgpu = true"):
        parse_profile(
            '[workload]\nkind = "vdi"\nobjective = "latency"\nvram_need_gib = 2.0\n'
            '[requirements]\nvgpu_edition = "vws"\n'
        )


def test_catalog_list_filters_by_status_and_edition(cli: Callable[..., object]) -> None:
    result = cli("catalog", "list", "--status", "discontinued", "--format", "json")
    rows = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert rows and all(r["status"] == "discontinued" for r in rows)
    assert "geforce-rtx-4090" in {r["id"] for r in rows}
    result = cli("catalog", "list", "--vgpu-edition", "vws", "--format", "json")
    ids = {r["id"] for r in json.loads(result.stdout)}  # type: ignore[attr-defined]
    assert {"l40s", "a16", "a10"} <= ids and not ids & {"a100-80gb-pcie", "h100-pcie"}
    bad = cli("catalog", "list", "--vgpu-edition", "vdws")
    assert bad.exit_code == 2 and "vpc, vws, vcs" in bad.stderr  # type: ignore[attr-defined]


def test_the_summary_names_licences_when_the_life_cost_includes_them() -> None:
    """vdi-many-users: 2 × L40 at $16,348 cost $58,320 over their life; most of that is
    vGPU licences, so the summary must not call it "with electricity" alone."""
    from gpuadvisor.decision.words import pick_cost_sentence
    from gpuadvisor.pipeline import advise

    decision = advise(REPO / "examples" / "vdi-many-users.toml", sensitivity=False)
    top = decision.picks[0]
    assert top.licence_cost_usd > 0
    assert top.lifecycle_cost_usd == pytest.approx(
        top.total_price_usd + top.energy_cost_usd + top.licence_cost_usd, abs=1
    )
    assert pick_cost_sentence(top).endswith("with electricity and licences.")
