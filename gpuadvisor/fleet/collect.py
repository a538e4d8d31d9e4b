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
from concurrent.futures import ThreadPoolExecutor
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
    answers: dict[str, Answer] = field(default_factory=dict)
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
    asked = [everyone, *per_group, *run.queries]
    results = _ask(client, asked, run, at)
    for query in (everyone, *per_group):  # without them there is no fleet to judge
        if isinstance(results[id(query)], PrometheusError):
            raise results[id(query)]  # type: ignore[misc]
    fold = Fold(fleet.host_label, fleet.node_host_label)
    fold.add(everyone, _answer(results, everyone))
    members: dict[str, list[str]] = {g.name: [] for g in fleet.groups}
    owner: dict[str, str] = {}
    notes: list[str] = []
    for group, query in zip(fleet.groups, per_group, strict=False):
        for host in sorted(set(_hosts(_answer(results, query), fleet.host_label))):
            if host in owner:
                if owner[host] != group.name:
                    notes.append(
                        f"{host} matches groups {owner[host]!r} and {group.name!r}; "
                        "judged in the first"
                    )
                continue
            owner[host] = group.name
            members[group.name].append(host)
    collection = Collection(
        plan=run,
        at=at,
        hosts={h: fold.hosts[h] for h in sorted(owner) if h in fold.hosts},
        members=members,
        unassigned=sorted(set(fold.hosts) - set(owner)),
        notes=notes,
    )
    only = set(owner)
    for query in run.queries:
        result = results[id(query)]
        if isinstance(result, PrometheusError):
            collection.failed[query.name] = result.message
            continue
        collection.answers[query.name] = result
        fold.add(query, result, only=only)
    # The costly share of each clock event reason, for the hosts that can need it.
    shares = reason_queries(selector, window_s, fleet.host_label, fold.flagged(only))
    results = _ask(client, shares, run, at)
    run = collection.plan = dataclasses.replace(run, queries=run.queries + tuple(shares))
    for query in shares:
        result = results[id(query)]
        if isinstance(result, PrometheusError):
            collection.failed[query.name] = result.message
            continue
        collection.answers[query.name] = result
        fold.add(query, result, only=only)
    for name, count in sorted(fold.unlabelled.items()):
        collection.notes.append(
            f"{count} series of {name} carry no {fleet.host_label!r} label; ignored"
        )
    collection.seconds = time.monotonic() - started
    return collection


def _ask(
    client: Client, queries: list[Query], run: Plan, at: float
) -> dict[int, Answer | PrometheusError]:
    def one(query: Query) -> Answer | PrometheusError:
        try:
            if query.kind == "range":
                return client.range(query.expr, at - run.window_s + run.step_s, at, run.step_s)
            return client.instant(query.expr, at)
        except PrometheusError as exc:
            if exc.partial_ok:
                return exc
            raise

    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        answers = list(pool.map(one, queries))
    return {id(q): a for q, a in zip(queries, answers, strict=False)}


def _answer(results: dict[int, Answer | PrometheusError], query: Query) -> Answer:
    found = results[id(query)]
    assert isinstance(found, Answer)
    return found


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
                series=len(answer.series) if answer else 0,
                failed=collection.failed.get(query.name),
            )
        )
    return refs
