"""Asking Prometheus: every query of the plan, a few at a time, folded into one
reading per host, with what is missing said per query.

Which hosts make up the fleet, and which group each belongs to, comes from the
identity queries (the GPUs each host's dcgm-exporter series name): once over the whole
``--selector``, once per group with the group's selector added. A host goes to the
first group that names it. The value queries run once over the whole selector and
are kept for the hosts of some group.

A query that cannot be answered ends the run when Prometheus cannot be reached or
refuses it (exit 2, named); one that timed out or failed on the server leaves its
values unknown for every host, and the report says so.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Final

from gpuadvisor.fleet.client import Answer, Client, PrometheusError
from gpuadvisor.fleet.model import Missing, QueryRef
from gpuadvisor.fleet.profiles import Fleet
from gpuadvisor.fleet.promql import Selector
from gpuadvisor.fleet.queries import Plan, Query, identity_query, plan, purpose, reason_queries
from gpuadvisor.fleet.readings import Fold, HostReading

#: Queries in flight at once (Prometheus runs 20 by default).
CONCURRENCY: Final = 4
#: Hosts named per missing series in the report.
NAMED_HOSTS: Final = 20


@dataclass
class Collection:
    plan: Plan
    at: float
    hosts: dict[str, HostReading]
    members: dict[str, list[str]]
    unassigned: list[str]
    #: query name -> its answer without the series (folded in already: see _stream)
    answers: dict[str, Answer] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def missing_for(self, host: str) -> tuple[str, ...]:
        answered = self.hosts[host].answered
        return tuple(q.name for q in self.plan.queries if q.name not in answered and not q.sparse)

    def warnings(self) -> list[str]:
        found: list[str] = []
        for name, answer in self.answers.items():
            found += [f"{name}: {w}" for w in answer.warnings]
        return list(dict.fromkeys(found))


def collect(
    client: Client, fleet: Fleet, selector: Selector, window_s: int, at: float
) -> Collection:
    started = time.monotonic()
    run = plan(selector, window_s, fleet.host_label, fleet.node_host_label)
    everyone = identity_query(selector, window_s, fleet.host_label)
    per_group = [
        identity_query(selector.and_(g.selector), window_s, fleet.host_label) for g in fleet.groups
    ]
    fold = Fold(fleet.host_label, fleet.node_host_label)
    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        # Without the identity answers there is no fleet to judge: any failure ends it.
        first = [
            a
            for a in pool.map(lambda q: _one(client, q, run, at, must=True), [everyone, *per_group])
            if isinstance(a, Answer)
        ]
        fold.add(everyone, first[0])
        collection = _members(fleet, first[1:], fold, run, at)
        only = set(collection.hosts)
        _stream(pool, client, run.queries, run, at, collection, fold, only)
        # The costly share of each clock event reason, for the hosts that can need it.
        shares = reason_queries(selector, window_s, fleet.host_label, fold.flagged(only))
        collection.plan = dataclasses.replace(run, queries=run.queries + tuple(shares))
        _stream(pool, client, shares, run, at, collection, fold, only)
    for name, count in sorted(fold.unlabelled.items()):
        collection.notes.append(
            f"{count} series of {name} carry no {fleet.host_label!r} label; ignored"
        )
    collection.seconds = time.monotonic() - started
    return collection


def _members(fleet: Fleet, answers: list[Answer], fold: Fold, run: Plan, at: float) -> Collection:
    """Each host to the first group whose identity answer names it."""
    members: dict[str, list[str]] = {g.name: [] for g in fleet.groups}
    owner: dict[str, str] = {}
    notes: list[str] = []
    for group, answer in zip(fleet.groups, answers, strict=True):
        for host in sorted(set(_hosts(answer, fleet.host_label))):
            if host not in fold.hosts:  # it appeared between the two queries
                continue
            if host in owner:
                notes.append(
                    f"{host} matches groups {owner[host]!r} and {group.name!r}; judged in the first"
                )
                continue
            owner[host] = group.name
            members[group.name].append(host)
    return Collection(
        plan=run,
        at=at,
        hosts={h: fold.hosts[h] for h in sorted(owner)},
        members=members,
        unassigned=sorted(set(fold.hosts) - set(owner)),
        notes=notes,
    )


def _one(
    client: Client, query: Query, run: Plan, at: float, *, must: bool = False
) -> Answer | PrometheusError:
    """The answer to ``query``, or the failure a run can go on without."""
    try:
        if query.kind == "range":
            return client.range(query.expr, at - run.window_s + run.step_s, at, run.step_s)
        return client.instant(query.expr, at)
    except PrometheusError as exc:
        if exc.partial_ok and not must:
            return exc
        raise


def _stream(
    pool: ThreadPoolExecutor,
    client: Client,
    queries: Sequence[Query],
    run: Plan,
    at: float,
    collection: Collection,
    fold: Fold,
    only: set[str],
) -> None:
    """Ask ``queries`` a few at a time and fold each answer in as it arrives; only its
    hash, warnings and size are kept after, so the answers are never all in memory."""
    futures = {pool.submit(_one, client, q, run, at): q for q in queries}
    try:
        for future in as_completed(futures):
            query, result = futures[future], future.result()
            if isinstance(result, PrometheusError):
                collection.failed[query.name] = result.message
                continue
            fold.add(query, result, only=only)
            collection.counts[query.name] = len(result.series)
            collection.answers[query.name] = dataclasses.replace(result, series=())
    finally:
        for future in futures:
            future.cancel()


def _hosts(answer: Answer, label: str) -> list[str]:
    from gpuadvisor.fleet.readings import host_key

    return [h for s in answer.series if (h := host_key(s.labels, label)) is not None]


def missing_series(collection: Collection) -> list[Missing]:
    """Per query: the hosts of some group it returned nothing for."""
    hosts = sorted(collection.hosts)
    found = []
    for query in collection.plan.queries:
        failed = collection.failed.get(query.name)
        if query.sparse and failed is None:
            continue
        lacking = [h for h in hosts if query.name not in collection.hosts[h].answered]
        if not lacking:
            continue
        found.append(
            Missing(
                query=query.name,
                purpose=purpose(query),
                hosts_missing=len(lacking),
                hosts=tuple(lacking[:NAMED_HOSTS]),
                everywhere=len(lacking) == len(hosts),
                reason=failed or "no series",
            )
        )
    return found


def query_refs(collection: Collection) -> list[QueryRef]:
    refs = []
    for query in collection.plan.queries:
        answer = collection.answers.get(query.name)
        refs.append(
            QueryRef(
                name=query.name,
                promql=query.expr,
                kind=query.kind,
                sha256=answer.sha256 if answer else None,
                series=collection.counts.get(query.name, 0),
                failed=collection.failed.get(query.name),
            )
        )
    return refs
