"""One run of ``gpuadvisor fleet``: ask Prometheus, judge every host, add it all up.

Pure of printing and exiting: problems are raised as the error family, timings are
returned beside the report (they are not part of it, so the same data gives the same
report).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuadvisor import __version__
from gpuadvisor.fleet.client import Client
from gpuadvisor.fleet.collect import Collection, collect, missing_series, query_refs
from gpuadvisor.fleet.judge import Job, Setup, judge_all
from gpuadvisor.fleet.model import FleetReport, HostVerdict, Provenance, Source
from gpuadvisor.fleet.plan import group_report, totals
from gpuadvisor.fleet.profiles import Fleet
from gpuadvisor.fleet.promql import Selector, duration
from gpuadvisor.fleet.snapshot import Context


@dataclass(frozen=True)
class Timings:
    query_s: float
    judge_s: float
    hosts: int
    gpus: int


@dataclass(frozen=True)
class Options:
    selector: Selector
    selector_text: str
    window_s: int
    at: float
    top: int = 20
    sort: str = "severity"
    workers: int | None = None
    catalog_overlays: tuple[Path, ...] = ()
    rules_overlays: tuple[Path, ...] = ()


def run_fleet(client: Client, fleet: Fleet, options: Options) -> tuple[FleetReport, Timings]:
    collection = collect(client, fleet, options.selector, options.window_s, options.at)
    started = time.monotonic()
    verdicts = judge(collection, fleet, client.url, options)
    judge_s = time.monotonic() - started
    report = assemble(collection, fleet, client.url, options, verdicts)
    return report, Timings(collection.seconds, judge_s, report.totals.hosts, report.totals.gpus)


def context_of(collection: Collection, url: str) -> Context:
    parts = {q.name: q.part for q in collection.plan.queries}
    return Context(
        url=url,
        window=collection.plan.window,
        at_iso=iso(collection.at),
        queries={name: (answer.sha256, parts[name]) for name, answer in collection.answers.items()},
    )


def judge(collection: Collection, fleet: Fleet, url: str, options: Options) -> list[HostVerdict]:
    jobs = [
        Job(group=group, reading=collection.hosts[host], missing=collection.missing_for(host))
        for group, hosts in collection.members.items()
        for host in hosts
        if host in collection.hosts
    ]
    setup = Setup(
        groups=fleet.groups,
        context=context_of(collection, url),
        catalog_overlays=options.catalog_overlays,
        rules_overlays=options.rules_overlays,
    )
    return judge_all(jobs, setup, workers=options.workers)


def assemble(
    collection: Collection,
    fleet: Fleet,
    url: str,
    options: Options,
    verdicts: Sequence[HostVerdict],
) -> FleetReport:
    from gpuadvisor.decision.dates import report_date
    from gpuadvisor.engine.rules import load_rules
    from gpuadvisor.inputs.catalog import load_catalog

    by_group: dict[str, list[HostVerdict]] = {g.name: [] for g in fleet.groups}
    for verdict in verdicts:
        by_group[verdict.group].append(verdict)
    groups = [
        group_report(
            g, sorted(by_group[g.name], key=lambda v: v.host), top=options.top, sort=options.sort
        )
        for g in fleet.groups
    ]
    notes = list(collection.notes)
    unjudged = [v for v in verdicts if v.status == "unjudged"]
    notes += [f"{v.host} could not be judged: {v.error}" for v in unjudged[:20]]
    return FleetReport(
        source=Source(
            prometheus=url,
            window=duration(options.window_s),
            window_s=options.window_s,
            at=iso(options.at),
            selector=options.selector_text,
            host_label=fleet.host_label,
            node_host_label=fleet.node_host_label,
            profiles=Path(fleet.file).name,
        ),
        groups=tuple(groups),
        totals=totals(groups, fleet.budget_usd),
        missing=tuple(missing_series(collection)),
        warnings=tuple(collection.warnings()),
        unassigned_hosts=tuple(collection.unassigned),
        notes=tuple(notes),
        hosts=tuple(sorted(verdicts, key=lambda v: (v.group, v.host))),
        queries=tuple(query_refs(collection)),
        provenance=Provenance(
            gpuadvisor=__version__,
            catalog=load_catalog(list(options.catalog_overlays)).version,
            rules=load_rules(list(options.rules_overlays)).version,
            generated_at=report_date(),
        ),
    )


def iso(at: float) -> str:
    return dt.datetime.fromtimestamp(at, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
