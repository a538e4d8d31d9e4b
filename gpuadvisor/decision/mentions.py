"""What a buyer is told where it applies, beside the purchase (kind ``engine``): that
NVIDIA's GeForce driver licence excludes data-center deployment, when a GeForce card is
picked for a rack server or a service many users share. (Cloud rental for jobs run a
few times a month is a lever, :mod:`gpuadvisor.decision.levers`; the used market for
cards no longer made is said beside each such pick, :func:`words.pick_flags`.)"""

from __future__ import annotations

from gpuadvisor.decision.model import Finding
from gpuadvisor.engine.core import Core
from gpuadvisor.engine.leverdata import lever_data

#: How NVIDIA names its consumer cards (the licence is GeForce's).
GEFORCE = "GeForce"


def licence_finding(core: Core) -> Finding | None:
    """GeForce's driver licence against a rack server or a shared service."""
    top, facts = core.top, core.facts
    if top is None:
        return None
    sku = top.kept_sku if top.count == 0 and top.kept_sku is not None else top.sku
    if GEFORCE not in sku.name:
        return None
    licence = lever_data().licence
    chassis = facts.get("platform.chassis")
    if chassis in licence.datacenter_chassis:
        where = f"a {chassis} server"
    elif licence.shared(
        facts.get("workload.kind"),
        facts.get("workload.concurrent_jobs"),
        facts.get("requirements.vgpu"),
    ):
        where = "a service many users share, which may run in a data center"
    else:
        return None
    cards = top.count or top.kept
    return Finding(
        rule="ENGINE-LICENCE-001",
        category="driver",
        severity="warning",
        title="GeForce's driver licence does not cover data-center deployment",
        evidence=f"the pick is {cards} × {sku.name} for {where}",
        rationale=" ".join(licence.why.split()) + f" ({licence.source})",
        action=(
            "Check the deployment against NVIDIA's GeForce licence (section 2.1.3) before "
            "buying, or pick a professional or data-center card, whose drivers are licensed "
            "for it."
        ),
        effect="stated beside the recommendation",
        kind="engine",
    )
