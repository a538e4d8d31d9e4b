"""The fleet's verdicts added up: per group the finding counts, the hosts to fix first,
the idle capacity, and one purchase plan; then the totals against the fleet's budget.

The purchase plan of a group starts from its hosts' own decisions (each made by the
engine with the group's profile and that host's evidence). Hosts with something to fix
first, failing or bottlenecked, buy nothing yet: a faster GPU would not help them.
Idle hosts buy nothing. Of the healthy hosts whose decision buys cards, those whose
wanted jobs the group's idle GPUs can hold are deferred (their work moves onto cards
already paid for), the fewest jobs first, so the idle capacity defers as many
purchases as it can. The rest buy what their decision says; hosts buying the same
cards the same way make one line.

Budgets: the group's ``budget_usd`` in the profiles file, else the profile's own
``budget.max_usd`` (a per-host purchase budget) times the hosts buying. The fleet's:
``budget_usd`` at the top of the profiles file, else the sum of the groups' budgets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Final

from gpuadvisor.fleet.judgement import STATUSES, Status
from gpuadvisor.fleet.model import (
    FindingCount,
    GroupReport,
    HostToFix,
    HostVerdict,
    IdleHost,
    PlanLine,
    Purchase,
    Totals,
)
from gpuadvisor.fleet.profiles import Group

_SEVERITY: Final = {"blocker": 0, "warning": 1, "advice": 2, "info": 3}
SORTS: Final = ("severity", "host", "gpus", "fixes")


def fix_order(sort: str) -> Callable[[HostVerdict], tuple[object, ...]]:
    """The key hosts to fix are listed by: the worst first (``severity``: blocker
    before warning, then the most fixes, the most GPUs), or by name, GPUs, fixes."""

    def severity(v: HostVerdict) -> tuple[object, ...]:
        rank = _SEVERITY.get(v.severity or "", 9)
        return (v.status != "failing", rank, -len(v.fixes), -v.gpus, v.host)

    keys: dict[str, Callable[[HostVerdict], tuple[object, ...]]] = {
        "severity": severity,
        "host": lambda v: (v.host,),
        "gpus": lambda v: (-v.gpus, *severity(v)),
        "fixes": lambda v: (-len(v.fixes), *severity(v)),
    }
    return keys[sort]


def group_report(
    group: Group, verdicts: Sequence[HostVerdict], *, top: int, sort: str = "severity"
) -> GroupReport:
    status: dict[Status, int] = dict.fromkeys(STATUSES, 0)
    for v in verdicts:
        status[v.status] += 1
    to_fix = sorted((v for v in verdicts if v.fixes and v.status != "idle"), key=fix_order(sort))
    idle = [
        IdleHost(host=v.host, status=v.status, gpus=v.idle_gpus, jobs=v.idle_jobs)
        for v in sorted(verdicts, key=lambda v: v.host)
        if v.idle_gpus and v.status != "failing"
    ]
    return GroupReport(
        name=group.name,
        selector=group.selector_text,
        profile=group.profile_path.name,
        profile_sha256=group.profile_sha256,
        hosts=len(verdicts),
        gpus=sum(v.gpus for v in verdicts),
        status=status,
        findings=tuple(_finding_counts(verdicts)),
        hosts_to_fix=tuple(
            HostToFix(
                host=v.host,
                status=v.status,
                severity=v.severity,
                gpus=v.gpus,
                gpu_models=v.gpu_models,
                fixes=v.fixes,
            )
            for v in to_fix[:top]
        ),
        hosts_to_fix_total=len(to_fix),
        idle_gpus=sum(len(h.gpus) for h in idle),
        idle=tuple(idle),
        purchase=purchase(group, verdicts, sum(h.jobs for h in idle)),
    )


def _finding_counts(verdicts: Sequence[HostVerdict]) -> list[FindingCount]:
    counted: Counter[str] = Counter()
    about: dict[str, FindingCount] = {}
    for v in verdicts:
        for fix in v.fixes:
            about.setdefault(
                fix.rule,
                FindingCount(
                    rule=fix.rule,
                    title=fix.title,
                    category=fix.category,
                    severity=fix.severity,
                    fix_first=True,
                    hosts=0,
                ),
            )
        counted.update(v.findings)
    return sorted(
        (about[r].model_copy(update={"hosts": n}) for r, n in counted.items() if r in about),
        key=lambda f: (-f.hosts, _SEVERITY[f.severity], f.rule),
    )


def purchase(group: Group, verdicts: Sequence[HostVerdict], idle_jobs: int) -> Purchase:
    wanting = sorted(
        (v for v in verdicts if v.helps and v.purchase is not None),
        key=lambda v: (v.purchase.jobs_wanted if v.purchase else 0, v.host),
    )
    left = idle_jobs
    deferred: list[HostVerdict] = []
    buying: list[HostVerdict] = []
    for v in wanting:
        assert v.purchase is not None
        if 0 < v.purchase.jobs_wanted <= left:
            left -= v.purchase.jobs_wanted
            deferred.append(v)
        else:
            buying.append(v)
    lines = _lines(buying)
    priced = [line.subtotal_usd for line in lines if line.subtotal_usd is not None]
    total = round(sum(priced), 2)
    on_quote = sum(line.hosts for line in lines if line.subtotal_usd is None)
    if group.budget_usd is not None:
        budget: float | None = group.budget_usd
        source = "the group's budget_usd in the profiles file"
    else:
        budget = group.profile.budget.max_usd * len(buying) if buying else None
        source = (
            f"the profile's budget.max_usd (${group.profile.budget.max_usd:,.0f}) "
            f"times the {len(buying)} host(s) buying"
        )
    within = None if budget is None else total <= budget + 1e-6
    return Purchase(
        helps=bool(buying),
        summary=_summary(buying, deferred, lines, total, on_quote),
        hosts_wanting=len(wanting),
        hosts_deferred=len(deferred),
        deferred_hosts=tuple(v.host for v in deferred),
        jobs_on_idle_gpus=idle_jobs - left,
        idle_jobs_left=left,
        hosts_buying=len(buying),
        lines=tuple(lines),
        cards=sum(line.cards for line in lines),
        total_usd=total,
        hosts_on_quote=on_quote,
        budget_usd=budget,
        budget_source=source,
        within_budget=within,
    )


def _lines(buying: Sequence[HostVerdict]) -> list[PlanLine]:
    grouped: dict[tuple[str, int, str], list[HostVerdict]] = {}
    for v in buying:
        assert v.purchase is not None
        grouped.setdefault((v.purchase.sku, v.purchase.count, v.purchase.action), []).append(v)
    lines = []
    for (sku, count, _action), hosts in grouped.items():
        first = hosts[0].purchase
        assert first is not None
        per_host = first.total_usd
        lines.append(
            PlanLine(
                sku=sku,
                name=first.name,
                action=first.action,
                cards_per_host=count,
                hosts=len(hosts),
                cards=count * len(hosts),
                unit_price_usd=first.unit_price_usd,
                per_host_usd=per_host,
                subtotal_usd=None if per_host is None else round(per_host * len(hosts), 2),
                price_kind=first.price_kind,
                host_names=tuple(sorted(v.host for v in hosts)),
            )
        )
    return sorted(
        lines, key=lambda line: (-(line.subtotal_usd or 0), line.sku, line.cards_per_host)
    )


def _summary(
    buying: Sequence[HostVerdict],
    deferred: Sequence[HostVerdict],
    lines: Sequence[PlanLine],
    total: float,
    on_quote: int,
) -> str:
    if not buying:
        if deferred:
            return (
                f"Buy nothing: the idle GPUs can hold the jobs of the {len(deferred)} "
                "host(s) whose decision buys cards."
            )
        return "Buy nothing for this group: no healthy host's decision buys cards."
    parts = [
        f"{line.hosts} host(s): {_verb(line.action)} {line.cards_per_host} x {line.name}"
        for line in lines
    ]
    text = f"{'; '.join(parts)}; ${total:,.0f} in all"
    if on_quote:
        text += f", and {on_quote} host(s) on quote"
    if deferred:
        text += f" ({len(deferred)} host(s) deferred: their jobs fit the idle GPUs)"
    return text + "."


def _verb(action: str) -> str:
    return {"add": "add", "replace": "replace the cards with", "new": "buy"}.get(action, "buy")


def totals(groups: Sequence[GroupReport], fleet_budget: float | None) -> Totals:
    status: dict[Status, int] = {s: sum(g.status[s] for g in groups) for s in STATUSES}
    total = round(sum(g.purchase.total_usd for g in groups), 2)
    if fleet_budget is not None:
        budget: float | None = fleet_budget
        source = "budget_usd at the top of the profiles file"
    else:
        budgets = [g.purchase.budget_usd for g in groups if g.purchase.budget_usd is not None]
        budget = round(sum(budgets), 2) if budgets else None
        source = "the sum of the groups' budgets"
    within = None if budget is None else total <= budget + 1e-6
    return Totals(
        groups=len(groups),
        hosts=sum(g.hosts for g in groups),
        gpus=sum(g.gpus for g in groups),
        status=status,
        hosts_to_fix=sum(g.hosts_to_fix_total for g in groups),
        idle_gpus=sum(g.idle_gpus for g in groups),
        hosts_buying=sum(g.purchase.hosts_buying for g in groups),
        hosts_deferred=sum(g.purchase.hosts_deferred for g in groups),
        cards=sum(g.purchase.cards for g in groups),
        total_usd=total,
        hosts_on_quote=sum(g.purchase.hosts_on_quote for g in groups),
        budget_usd=budget,
        budget_source=source,
        within_budget=within,
        over_budget_usd=None
        if within in (None, True) or budget is None
        else round(total - budget, 2),
    )
