"""``gpuadvisor fleet`` end to end, against a real Prometheus (Debian's) the suite starts
on 127.0.0.1 over recorded dcgm-exporter and node-exporter series (tests/fleet_support.py).
No part of the HTTP API is mocked."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.fleet import judge as judge_module
from gpuadvisor.fleet.build import Options, context_of, judge, run_fleet
from gpuadvisor.fleet.client import Answer, Client, PrometheusError
from gpuadvisor.fleet.collect import collect
from gpuadvisor.fleet.model import FleetReport
from gpuadvisor.fleet.profiles import Fleet, load_profiles
from gpuadvisor.fleet.promql import EVERYTHING
from gpuadvisor.fleet.snapshot import snapshot_of

from .conftest import CliResult
from .fleet_support import WINDOW, FleetData, free_port

WINDOW_S = 3600


@pytest.fixture(scope="module")
def fleet(fleet_prometheus: FleetData) -> Fleet:
    return load_profiles(fleet_prometheus.profiles)


def _options(data: FleetData, **changes: Any) -> Options:
    options = Options(
        selector=EVERYTHING, selector_text="{}", window_s=WINDOW_S, at=float(data.end)
    )
    return dataclasses.replace(options, **changes)


@pytest.fixture(scope="module")
def report(fleet_prometheus: FleetData, fleet: Fleet) -> FleetReport:
    return run_fleet(Client(fleet_prometheus.url), fleet, _options(fleet_prometheus))[0]


EXPECTED = {
    "t4-healthy": ("healthy", set()),
    "t4-idle": ("idle", {"UTIL-001"}),
    "t4-idle-2": ("idle", {"UTIL-001"}),
    "t4-cpu-bound": ("bottlenecked", {"CPU-001"}),
    "t4-io-bound": ("bottlenecked", {"IO-002"}),
    "t4-throttling": ("bottlenecked", {"THERM-001"}),
    "t4-xid": ("failing", {"XID-001", "HW-001", "HW-002"}),
    "t4-ecc": ("failing", {"ECC-004"}),
    "t4-remap": ("failing", {"REMAP-002"}),
    "t4-pcie": ("failing", {"PCIE-001"}),
    "t4-replays": ("failing", {"PCIE-003"}),
    "t4-no-node": ("healthy", set()),
    "a5000-healthy": ("healthy", set()),
    "a5000-idle": ("idle", {"UTIL-001"}),
}


@pytest.mark.parametrize("host", sorted(EXPECTED))
def test_each_kind_of_host_is_judged_right(report: FleetReport, host: str) -> None:
    verdict = next(v for v in report.hosts if v.host == host)
    status, rules = EXPECTED[host]
    assert (verdict.status, {f.rule for f in verdict.fixes}) == (status, rules), verdict.headline
    assert verdict.gpus == 2 and verdict.error is None
    if status == "idle":
        assert verdict.idle_gpus == (0, 1)
    else:
        assert verdict.idle_gpus == ()


def test_every_host_of_the_groups_is_judged_and_the_rest_named(report: FleetReport) -> None:
    assert {v.host for v in report.hosts} == set(EXPECTED)
    assert report.unassigned_hosts == ("gpu-elsewhere",)
    assert [g.name for g in report.groups] == ["inference", "training"]
    assert {v.group for v in report.hosts if v.host.startswith("a5000")} == {"training"}


def test_the_fleet_reports_totals_add_up(report: FleetReport) -> None:
    t = report.totals
    assert t.hosts == len(report.hosts) == sum(g.hosts for g in report.groups)
    assert t.gpus == sum(v.gpus for v in report.hosts) == sum(g.gpus for g in report.groups)
    assert sum(t.status.values()) == t.hosts
    for g in report.groups:
        p = g.purchase
        assert sum(g.status.values()) == g.hosts
        assert p.total_usd == pytest.approx(sum(line.subtotal_usd or 0 for line in p.lines))
        assert p.cards == sum(line.cards for line in p.lines)
        assert p.hosts_buying == sum(line.hosts for line in p.lines)
        assert p.hosts_wanting == p.hosts_buying + p.hosts_deferred
        for line in p.lines:
            assert (
                line.cards
                == line.cards_per_host * line.hosts
                == line.cards_per_host * len(line.host_names)
            )
            if line.subtotal_usd is not None:
                assert line.subtotal_usd == pytest.approx(line.per_host_usd * line.hosts)  # type: ignore[operator]
        assert g.idle_gpus == sum(len(i.gpus) for i in g.idle)
        assert p.jobs_on_idle_gpus + p.idle_jobs_left == sum(i.jobs for i in g.idle)
        assert g.hosts_to_fix_total == sum(
            1 for v in report.hosts if v.group == g.name and v.fixes and v.status != "idle"
        )
        for count in g.findings:
            assert count.hosts == sum(
                1 for v in report.hosts if v.group == g.name and count.rule in v.findings
            )
    assert t.total_usd == pytest.approx(sum(g.purchase.total_usd for g in report.groups))
    assert t.cards == sum(g.purchase.cards for g in report.groups)
    assert t.idle_gpus == sum(g.idle_gpus for g in report.groups)
    assert t.hosts_to_fix == sum(g.hosts_to_fix_total for g in report.groups)
    assert t.budget_usd == 100000 and t.budget_source.startswith("budget_usd at the top")
    assert t.within_budget is (t.total_usd <= 100000)


def test_idle_gpus_are_used_before_buying(report: FleetReport) -> None:
    inference = report.groups[0]
    assert {i.host for i in inference.idle} == {"t4-idle", "t4-idle-2"}
    # 10 GiB inference jobs: one per 15 GB T4, so the four idle T4s hold four jobs,
    # the four a healthy host of this profile wants: its purchase is deferred.
    assert [i.jobs for i in inference.idle] == [2, 2]
    p = inference.purchase
    assert p.hosts_deferred == 1 and p.jobs_on_idle_gpus == 4
    assert set(p.deferred_hosts) <= {"t4-healthy", "t4-no-node"}
    bought = {h for line in p.lines for h in line.host_names}
    assert bought == {"t4-healthy", "t4-no-node"} - set(p.deferred_hosts)
    # Failing and bottlenecked hosts buy nothing: a purchase would not help them yet.
    assert not bought & {v.host for v in report.hosts if v.status in ("failing", "bottlenecked")}


def test_hosts_to_fix_are_the_worst_first_with_their_evidence(report: FleetReport) -> None:
    fix = report.groups[0].hosts_to_fix
    assert [h.status for h in fix][:4] == ["failing"] * 4
    assert fix[0].severity == "blocker" and fix[-1].severity == "warning"
    xid = next(h for h in fix if h.host == "t4-xid")
    evidence = {f.rule: f for f in xid.fixes}["XID-001"]
    assert "host.xid_hardware_count = 1" in evidence.evidence
    assert any("DCGM_FI_DEV_XID_ERRORS[1h]" in s for s in evidence.sources)


def test_a_link_that_keeps_retrying_is_named_with_its_rate(report: FleetReport) -> None:
    fix = report.groups[0].hosts_to_fix
    replays = next(h for h in fix if h.host == "t4-replays")
    found = {f.rule: f for f in replays.fixes}["PCIE-003"]
    assert found.title == "A GPU's PCIe link keeps retrying transfers"
    assert found.evidence == "gpu.pcie_replays_per_min_max = 40 per minute"
    assert "prometheus: rate(DCGM_FI_DEV_PCIE_REPLAY_COUNTER[1h]) * 60" in found.sources[0]
    # A count since the last reset that did not grow in the window is not a rate.
    pcie = next(v for v in report.hosts if v.host == "t4-pcie")
    assert "PCIE-003" not in pcie.findings


def test_a_host_snapshot_rests_on_the_window_and_names_its_queries(
    fleet_prometheus: FleetData, fleet: Fleet
) -> None:
    collection = collect(
        Client(fleet_prometheus.url), fleet, EVERYTHING, WINDOW_S, float(fleet_prometheus.end)
    )
    context = context_of(collection, fleet_prometheus.url)
    snapshot = snapshot_of(collection.hosts["t4-cpu-bound"], context)
    assert {s.kind for s in snapshot.sources} == {"prometheus-query"}
    assert all(f"{WINDOW}" in s.file for s in snapshot.sources)
    shas = {name: answer.sha256 for name, answer in collection.answers.items()}
    for source in snapshot.sources:
        assert source.sha256 == shas[source.file.removeprefix("prometheus: ")]
    assert (
        "prometheus: avg_over_time(DCGM_FI_DEV_GPU_UTIL[1h])"
        in snapshot.provenance["gpus.utilisation"]
    )
    facts = derive_host_facts(snapshot).values
    assert facts["host.gpu_util_basis"] == "window" and facts["host.cpu_util_basis"] == "window"
    assert facts["gpu.thermal_basis"] == "window"
    assert facts["host.util_samples"] == 12
    assert facts["host.cpu_saturated_cores"] == 1
    assert 30 < float(facts["host.gpu_util_mean_pct"]) < 40  # type: ignore[arg-type]
    assert facts["host.xid_count"] == 0  # the Xid series was read: none, not unknown


def test_a_series_missing_for_some_hosts_is_a_partial_result(report: FleetReport) -> None:
    node = [m for m in report.missing if m.purpose in ("CPU", "disk", "network")]
    assert node and all(m.hosts == ("t4-no-node",) and not m.everywhere for m in node)
    verdict = next(v for v in report.hosts if v.host == "t4-no-node")
    assert {m.query for m in node} <= set(verdict.missing)
    # Exported by no host of this fleet: named, and nobody's verdict rests on it.
    assert any(m.everywhere and "DCGM_FI_DEV_MEMORY_TEMP" in m.query for m in report.missing)


class _OneQueryTimesOut(Client):
    """The real Prometheus, except that one query times out."""

    def instant(self, query: str, at: float) -> Answer:
        if "DCGM_FI_DEV_POWER_USAGE" in query:
            raise PrometheusError(
                f"Prometheus at {self.url} did not answer within 1 s", partial_ok=True
            )
        return super().instant(query, at)


def test_a_query_that_times_out_leaves_a_partial_result(
    fleet_prometheus: FleetData, fleet: Fleet
) -> None:
    report, _ = run_fleet(
        _OneQueryTimesOut(fleet_prometheus.url), fleet, _options(fleet_prometheus)
    )
    failed = [m for m in report.missing if m.reason != "no series"]
    assert [m.query for m in failed] == ["avg_over_time(DCGM_FI_DEV_POWER_USAGE[1h])"]
    assert failed[0].everywhere and "did not answer within 1 s" in failed[0].reason
    assert next(q for q in report.queries if q.name == failed[0].query).failed
    assert len(report.hosts) == len(EXPECTED)
    from gpuadvisor.fleet.report import render

    for fmt in ("md", "html"):
        text = render(report, fmt)
        assert isinstance(text, str) and "Queries that failed" in text and "1 query failed" in text
    assert render(report, "pdf")[:5] == b"%PDF-"


def test_judging_in_worker_processes_gives_the_same_verdicts(
    fleet_prometheus: FleetData, fleet: Fleet, report: FleetReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(judge_module, "PARALLEL_FROM", 1)
    monkeypatch.setattr(judge_module, "MAX_CHUNK", 3)
    collection = collect(
        Client(fleet_prometheus.url), fleet, EVERYTHING, WINDOW_S, float(fleet_prometheus.end)
    )
    verdicts = judge(collection, fleet, fleet_prometheus.url, _options(fleet_prometheus, workers=2))
    assert sorted(verdicts, key=lambda v: (v.group, v.host)) == list(report.hosts)


def test_a_selector_narrows_the_fleet(fleet_prometheus: FleetData, fleet: Fleet) -> None:
    from gpuadvisor.fleet.promql import parse_selector

    chosen = parse_selector('{cluster="b"}', field="--selector")
    report, _ = run_fleet(
        Client(fleet_prometheus.url),
        fleet,
        _options(fleet_prometheus, selector=chosen, selector_text=chosen.text()),
    )
    assert [g.hosts for g in report.groups] == [0, 2]
    assert report.groups[0].purchase.summary.startswith("Buy nothing")
    assert report.totals.hosts == 2 and not report.unassigned_hosts


# -- through the command line -----------------------------------------------------------


def _fleet_args(data: FleetData, *more: str) -> list[str]:
    return [
        "fleet",
        "--prometheus",
        data.url,
        "--profiles",
        str(data.profiles),
        "--window",
        WINDOW,
        "--at",
        str(data.end),
        *more,
    ]


def test_the_command_writes_every_format(
    fleet_prometheus: FleetData, cli: Callable[..., CliResult], tmp_path: object
) -> None:
    result = cli(*_fleet_args(fleet_prometheus, "--format", "json"))
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == "gpuadvisor/fleet/v1"
    for group in document["groups"]:
        assert {
            "selector",
            "profile",
            "hosts",
            "findings",
            "hosts_to_fix",
            "idle_gpus",
            "purchase",
        } <= set(group)
    assert {"hosts", "total_usd", "budget_usd"} <= set(document["totals"])
    assert "partial result" in result.stderr and "14 host(s), 28 GPU(s)" in result.stderr
    markdown = cli(*_fleet_args(fleet_prometheus))
    assert markdown.exit_code == 0 and "**Partial result:**" in markdown.stdout
    assert "## Group inference" in markdown.stdout and "t4-no-node" in markdown.stdout
    html = cli(*_fleet_args(fleet_prometheus, "--format", "html", "--top", "2"))
    assert html.exit_code == 0 and html.stdout.startswith("<!DOCTYPE html>")
    assert "the worst 2 are listed" in html.stdout
    out = f"{tmp_path}/fleet.pdf"
    pdf = cli(*_fleet_args(fleet_prometheus, "--format", "pdf", "-o", out))
    assert pdf.exit_code == 0, pdf.stderr
    with open(out, "rb") as handle:
        assert handle.read(5) == b"%PDF-"


def test_a_prometheus_that_is_down_exits_2(
    fleet_prometheus: FleetData, cli: Callable[..., CliResult]
) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    result = cli("fleet", "--prometheus", down, "--profiles", str(fleet_prometheus.profiles))
    assert result.exit_code == 2
    assert f"cannot reach Prometheus at {down}: connection refused" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_selector_prometheus_refuses_exits_2(
    fleet_prometheus: FleetData, cli: Callable[..., CliResult]
) -> None:
    # Valid for Python's re, not for Prometheus's RE2 (no lookahead).
    result = cli(*_fleet_args(fleet_prometheus, "--selector", '{cluster=~"a(?=b)"}'))
    assert result.exit_code == 2
    assert "refused the query" in result.stderr and "--selector" in result.stderr


def test_the_page_serves_the_same_report(fleet_prometheus: FleetData, fleet: Fleet) -> None:
    import httpx

    from gpuadvisor.fleet.serve import create_app
    from gpuadvisor.web.server import LOOPBACK_NAMES

    from .web_support import live_server

    app = create_app(
        Client(fleet_prometheus.url),
        fleet,
        _options(fleet_prometheus),
        allowed_hosts=LOOPBACK_NAMES,
    )
    with live_server(app) as base, httpx.Client(base_url=base, timeout=30) as browser:
        page = browser.get("/")
        assert page.status_code == 200 and "Group inference" in page.text
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
        document = browser.get("/fleet.json").json()
        assert document["totals"]["hosts"] == len(EXPECTED)
        assert browser.get("/fleet.md").text.startswith("# GPU fleet report")
        assert browser.post("/", content=b"x").status_code == 405
        assert browser.get("/", headers={"host": "evil.example"}).status_code == 421


def test_the_costly_reason_shares_are_asked_only_where_a_reason_could_be_active(
    fleet_prometheus: FleetData, fleet: Fleet
) -> None:
    collection = collect(
        Client(fleet_prometheus.url), fleet, EVERYTHING, WINDOW_S, float(fleet_prometheus.end)
    )
    shares = [q for q in collection.plan.queries if q.role == "reason"]
    assert shares and all("t4-throttling" in q.expr and "t4-healthy" not in q.expr for q in shares)
    context = context_of(collection, fleet_prometheus.url)
    healthy = snapshot_of(collection.hosts["t4-healthy"], context)
    assert {r: s.fraction for r, s in healthy.gpus[0].throttle_reasons.items()} == dict.fromkeys(
        (
            "hw_power_brake_slowdown",
            "hw_slowdown",
            "hw_thermal_slowdown",
            "sw_power_cap",
            "sw_thermal_slowdown",
        ),
        0.0,
    )
    assert healthy.provenance["gpus.throttle_reasons"] == [
        "prometheus: max_over_time(DCGM_FI_DEV_CLOCK_THROTTLE_REASONS[1h])"
    ]
    hot = snapshot_of(collection.hosts["t4-throttling"], context)
    share = hot.gpus[0].throttle_reasons["hw_thermal_slowdown"].fraction
    assert share is not None and 0.4 < share < 0.6  # every other minute
