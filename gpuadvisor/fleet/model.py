"""The fleet report, ``gpuadvisor/fleet/v1`` (CONTRACT §7): what ``fleet --format json``
prints and every other format renders.

``groups[]`` holds, per group of hosts: its selector and profile, how many hosts and
GPUs, the hosts by status, the count of hosts per finding, the hosts to fix first (the
worst first, with their evidence), the idle GPUs to use before buying, and one
purchase plan. ``totals`` adds the groups up against the fleet's budget. ``hosts[]``
lists every host judged (for tickets and dashboards); ``missing`` the series some or
all hosts did not report, ``queries`` every PromQL expression behind the figures.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuadvisor.fleet.judgement import Status
from gpuadvisor.vocabulary import Category, Severity

FLEET_SCHEMA: Final = "gpuadvisor/fleet/v1"


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Fix(_Out):
    """A fix-first finding of one host, as its decision phrased it."""

    rule: str
    category: Category
    severity: Severity
    title: str
    evidence: str = Field(description="The facts it rests on, with their values.")
    action: str
    sources: tuple[str, ...] = Field(
        description="Where the measured facts came from: the queries, by name, as the "
        "decision cites them (one entry per fact)."
    )


class HostPurchase(_Out):
    """What the host's own decision would buy (per host)."""

    sku: str
    name: str
    count: int
    action: Literal["new", "add", "replace", "keep"]
    unit_price_usd: float | None
    total_usd: float | None = Field(description="Null when the card's price is on quote.")
    price_kind: str
    jobs_wanted: int
    jobs_served: int


class HostVerdict(_Out):
    """One host, judged by the engine from its window aggregates."""

    host: str
    group: str
    status: Status
    gpus: int
    gpu_models: tuple[str, ...] = Field(description="'8 x NVIDIA A100-SXM4-80GB', per model.")
    severity: Severity | None = Field(description="The worst fix-first finding's severity.")
    fixes: tuple[Fix, ...]
    findings: tuple[str, ...] = Field(description="Rules that fired on measured facts.")
    idle_gpus: tuple[int, ...] = Field(description="Indices of the GPUs idle over the window.")
    idle_jobs: int = Field(description="Jobs of the group's profile those idle GPUs hold.")
    purchase: HostPurchase | None
    helps: bool = Field(description="Nothing to fix first, and the decision buys cards.")
    headline: str
    missing: tuple[str, ...] = Field(description="Queries that returned no series for the host.")
    error: str | None = Field(None, description="Why the host could not be judged.")


class FindingCount(_Out):
    rule: str
    title: str
    category: Category
    severity: Severity
    fix_first: bool
    hosts: int


class HostToFix(_Out):
    host: str
    status: Status
    severity: Severity | None
    gpus: int
    gpu_models: tuple[str, ...]
    fixes: tuple[Fix, ...]


class IdleHost(_Out):
    host: str
    status: Status
    gpus: tuple[int, ...]
    jobs: int = Field(description="Jobs of the group's profile these GPUs hold.")


class PlanLine(_Out):
    """Hosts whose decisions buy the same cards the same way."""

    sku: str
    name: str
    action: Literal["new", "add", "replace", "keep"]
    cards_per_host: int
    hosts: int
    cards: int
    unit_price_usd: float | None
    per_host_usd: float | None
    subtotal_usd: float | None = Field(description="Null when the card's price is on quote.")
    price_kind: str
    host_names: tuple[str, ...]


class Purchase(_Out):
    """The group's purchase: what its hosts' decisions buy, less what idle GPUs cover."""

    helps: bool = Field(description="Some host of the group is better off with the purchase.")
    summary: str
    hosts_wanting: int = Field(description="Healthy hosts whose decision buys cards.")
    hosts_deferred: int = Field(description="Of those, hosts whose jobs the idle GPUs can hold.")
    deferred_hosts: tuple[str, ...]
    jobs_on_idle_gpus: int = Field(description="Jobs moved onto idle GPUs instead of bought for.")
    idle_jobs_left: int = Field(description="Jobs the idle GPUs could still hold.")
    hosts_buying: int
    lines: tuple[PlanLine, ...]
    cards: int
    total_usd: float = Field(description="Sum of the priced lines.")
    hosts_on_quote: int = Field(description="Hosts whose cards are priced on quote (not in total).")
    budget_usd: float | None
    budget_source: str
    within_budget: bool | None


class GroupReport(_Out):
    name: str
    selector: str
    profile: str = Field(description="The profile file's name.")
    profile_sha256: str
    hosts: int
    gpus: int
    status: dict[Status, int] = Field(description="Hosts by status.")
    findings: tuple[FindingCount, ...] = Field(description="Hosts per finding, most first.")
    hosts_to_fix: tuple[HostToFix, ...] = Field(description="The worst first, top N.")
    hosts_to_fix_total: int
    idle_gpus: int
    idle: tuple[IdleHost, ...]
    purchase: Purchase


class Totals(_Out):
    groups: int
    hosts: int
    gpus: int
    status: dict[Status, int]
    hosts_to_fix: int
    idle_gpus: int
    hosts_buying: int
    hosts_deferred: int
    cards: int
    total_usd: float
    hosts_on_quote: int
    budget_usd: float | None
    budget_source: str
    within_budget: bool | None
    over_budget_usd: float | None = Field(description="How far the total is over, else null.")


class Missing(_Out):
    """A series some hosts (or all) did not report, and what it leaves unknown."""

    query: str
    purpose: str
    hosts_missing: int
    hosts: tuple[str, ...] = Field(description="The first of them, by name.")
    everywhere: bool = Field(description="No host of any group reported it.")
    reason: str = Field(description="'no series', or why the query failed.")


class QueryRef(_Out):
    name: str
    promql: str
    kind: Literal["instant", "range"]
    sha256: str | None
    series: int
    failed: str | None = None


class Source(_Out):
    prometheus: str
    window: str
    window_s: int
    at: str = Field(description="When the window ends, ISO 8601 UTC.")
    selector: str
    host_label: str
    node_host_label: str
    profiles: str


class Provenance(_Out):
    gpuadvisor: str
    catalog: str
    rules: str
    generated_at: str


class FleetReport(_Out):
    schema_: Literal["gpuadvisor/fleet/v1"] = Field(FLEET_SCHEMA, alias="schema")
    source: Source
    groups: tuple[GroupReport, ...]
    totals: Totals
    missing: tuple[Missing, ...]
    warnings: tuple[str, ...] = Field(description="What Prometheus warned of (partial answers).")
    unassigned_hosts: tuple[str, ...] = Field(description="Hosts no group's selector matched.")
    notes: tuple[str, ...]
    hosts: tuple[HostVerdict, ...]
    queries: tuple[QueryRef, ...]
    provenance: Provenance

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2) + "\n"
