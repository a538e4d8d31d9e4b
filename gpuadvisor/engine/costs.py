"""What an option costs over its life: the cards, the electricity for every card it
runs on, and vGPU licences for the users it serves. Also the assumptions behind those
figures, which every report quotes."""

from __future__ import annotations

from collections.abc import Mapping

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.option import Option
from gpuadvisor.engine.options import SHARDING_OVERHEAD

#: Average draw as a share of board power over the year, by objective. Batch and
#: training tiers run most of the time; latency endpoints idle between requests.
DUTY_CYCLE: dict[str, float] = {
    "throughput": 0.7,
    "latency": 0.4,
    "correctness": 0.5,
    "fleet-simplicity": 0.5,
}

HOURS_PER_YEAR = 8766.0

#: NVIDIA vGPU software, annual subscription per concurrent user (CCU), as listed in
#: NVIDIA's "Virtual GPU Software Packaging, Pricing, and Licensing Guide" (v10, 2022):
#: Virtual PC for office desktops, RTX Virtual Workstation for professional graphics.
VGPU_LICENCE_USD_PER_CCU_YEAR: dict[str, float] = {"vPC": 50.0, "vWS": 250.0}
VGPU_LICENCE_SOURCE = (
    "https://docs.nvidia.com/vgpu/packaging-pricing-licensing-guide/latest/index.html"
)
_WORKSTATION_KINDS = ("cad-cae", "visualization", "rendering", "simulation")

ASSUMPTIONS: tuple[str, ...] = (
    "vGPU licences (only when vGPU is required): one concurrent-user subscription per "
    "user served for every year of service, at NVIDIA's published annual prices "
    "(Virtual PC $50, RTX Virtual Workstation $250 per user-year; "
    f"{VGPU_LICENCE_SOURCE}); where the profile names no edition, office desktops of up "
    "to 2 GB (Virtual PC's B-series profiles) are costed in Virtual PC, except on a card "
    "NVIDIA supports with vWS and not vPC, and larger desktops in vWS.",
    "Lifecycle cost = cards' price + electricity for the planned service life; average "
    "draw = board power × duty cycle (throughput 70%, latency 40%, otherwise 50%); "
    "cards already in the host cost only their electricity.",
    "Usable memory is what one process can allocate (a real capture where the catalog has "
    "one, else the label less the driver's reserve and, with ECC on GDDR, 1/16); every job "
    "keeps the headroom of rules/_policy.toml (at least 0.5 GiB or 5% of its need).",
    "Concurrent jobs share a card only for VDI, inference, media and visualization, "
    "as many as fit its usable memory with their headroom; training, rendering and "
    "simulation jobs get a card each, unless the profile asks for vGPU: then every kind "
    "of job shares cards, each tenant in a whole vGPU profile.",
    f"Model parallelism loses {SHARDING_OVERHEAD:.0%} of each card's memory to replicated "
    "state and communication buffers; a data-parallel job holds a full replica on every "
    "card unless it is sharded (FSDP, ZeRO-3).",
    "Prices are the catalog's reference prices (launch MSRP, list or reseller, dated); "
    "quotes will differ.",
)


def _number(facts: Mapping[str, Value], name: str) -> float:
    value = facts[name]
    assert isinstance(value, (int, float)) and not isinstance(value, bool), name
    return float(value)


class CostTerms:
    """What lifecycle costs read from the facts, read once for many options."""

    __slots__ = (
        "duty",
        "edition",
        "electricity_usd_per_kwh",
        "licence_rate_usd",
        "upgrade_rate_usd",
        "years",
    )

    def __init__(self, facts: Mapping[str, Value]) -> None:
        licence = vgpu_licence(facts)
        self.years = _number(facts, "requirements.lifecycle_years")
        self.electricity_usd_per_kwh = _number(facts, "budget.electricity_usd_per_kwh")
        self.duty = DUTY_CYCLE.get(str(facts["workload.objective"]), 0.5)
        #: The edition licensed (None: no vGPU).
        self.edition: str | None = licence[0] if licence else None
        self.licence_rate_usd = (
            VGPU_LICENCE_USD_PER_CCU_YEAR.get(licence[0], 0.0) * self.years if licence else 0.0
        )
        #: When the profile names no edition and Virtual PC is assumed: the vWS rate, for
        #: the options whose cards NVIDIA supports with vWS but not vPC (None otherwise).
        self.upgrade_rate_usd: float | None = (
            VGPU_LICENCE_USD_PER_CCU_YEAR["vWS"] * self.years
            if self.edition == "vPC" and facts.get("requirements.vgpu_edition", "none") == "none"
            else None
        )

    def edition_of(self, option: Option) -> str | None:
        """The edition ``option``'s users are licensed in: the decision's, or vWS where
        Virtual PC was only assumed and a card of the option supports vWS, not vPC (the
        edition a desktop on it can be licensed in)."""
        if self.upgrade_rate_usd is not None and any(
            _vws_not_vpc(sku.vgpu_editions) for sku in option.skus
        ):
            return "vWS"
        return self.edition

    def energy_usd(self, option: Option) -> float:
        # Every host the purchase equips draws its cards' power.
        watts = option.total_power_w * option.hosts
        kwh = watts * self.duty * HOURS_PER_YEAR * self.years / 1000.0
        return kwh * self.electricity_usd_per_kwh

    def licence_usd(self, option: Option) -> float:
        if self.upgrade_rate_usd is not None and self.edition_of(option) == "vWS":
            return self.upgrade_rate_usd * option.jobs_served
        return self.licence_rate_usd * option.jobs_served

    def lifecycle_usd(self, option: Option) -> float | None:
        """Price + electricity + licences over the service life; None when on quote."""
        total = option.total_price_usd
        if total is None:  # on quote: stays unknown through the sum, never a zero
            return None
        return total + (self.energy_usd(option) + self.licence_usd(option))


def _vws_not_vpc(editions: tuple[str, ...] | None) -> bool:
    return editions is not None and "vpc" not in editions and "vws" in editions


def energy_cost_usd(option: Option, facts: Mapping[str, Value]) -> float:
    return CostTerms(facts).energy_usd(option)


def licence_cost_usd(option: Option, facts: Mapping[str, Value]) -> float:
    return CostTerms(facts).licence_usd(option)


def vgpu_required(facts: Mapping[str, Value]) -> bool:
    """Whether the profile requires vGPU (and so a licence per user)."""
    return facts.get("requirements.vgpu") is True


def vgpu_licence(facts: Mapping[str, Value]) -> tuple[str, float] | None:
    """(edition, cost over the service life for every wanted user) when vGPU is
    required, else None.

    A vCS licence, which NVIDIA prices per GPU, has no public price: it comes back with
    cost 0 and :func:`vgpu_licence_priced` says so (the pick names it as on quote)."""
    if not vgpu_required(facts):
        return None
    edition = vgpu_licence_edition(facts)
    per_user = VGPU_LICENCE_USD_PER_CCU_YEAR.get(edition)
    if per_user is None:
        return edition, 0.0
    users = _number(facts, "workload.concurrent_jobs")
    years = _number(facts, "requirements.lifecycle_years")
    return edition, per_user * users * years


#: The licence name of each ``requirements.vgpu_edition``.
VGPU_LICENCE_NAMES: dict[str, str] = {"vpc": "vPC", "vws": "vWS", "vcs": "vCS"}


#: Virtual PC licenses B-series vGPU types only, whose frame buffers go up to 2 GB; a
#: larger desktop runs a Q-series type, which needs RTX Virtual Workstation (NVIDIA vGPU
#: user guide, "Virtual GPU Types":
#: https://docs.nvidia.com/vgpu/latest/grid-vgpu-user-guide/index.html#virtual-gpu-types-grid).
VPC_MAX_PROFILE_GIB = 2.0


def vgpu_licence_edition(facts: Mapping[str, Value]) -> str:
    """The edition licensed: the profile's ``requirements.vgpu_edition``, or when it says
    ``none``, vWS for workstation work, certified ISV drivers or desktops larger than a
    Virtual PC profile, and vPC otherwise."""
    stated = facts.get("requirements.vgpu_edition", "none")
    if isinstance(stated, str) and stated in VGPU_LICENCE_NAMES:
        return VGPU_LICENCE_NAMES[stated]
    need = facts.get("workload.vram_need_gib")
    workstation = (
        facts["requirements.certified_drivers"] is True
        or facts["workload.kind"] in _WORKSTATION_KINDS
        or (isinstance(need, (int, float)) and need > VPC_MAX_PROFILE_GIB)
    )
    return "vWS" if workstation else "vPC"


def vgpu_licence_priced(facts: Mapping[str, Value]) -> bool:
    """Whether :func:`vgpu_licence` holds the licence's price (no licence: True)."""
    licence = vgpu_licence(facts)
    return licence is None or licence[0] in VGPU_LICENCE_USD_PER_CCU_YEAR


def lifecycle_cost_usd(option: Option, facts: Mapping[str, Value]) -> float | None:
    """Price + electricity + licences over the service life; None when on quote."""
    return CostTerms(facts).lifecycle_usd(option)
