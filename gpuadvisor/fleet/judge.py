"""Every host judged by the same engine as ``advise``, in parallel over the machine's
cores with the standard library's process pool.

Each worker process holds one :class:`~gpuadvisor.decision.build.Advisor` (the catalog,
the rules and every cache, as ``docs/design.md`` asks of a process that makes many
decisions) and judges hosts in chunks: reading -> host/v1 snapshot -> the decision
through :func:`gpuadvisor.pipeline.advise_profile` (no what-would-change scan) -> a
compact :class:`~gpuadvisor.fleet.model.HostVerdict`. Only verdicts travel back, never
decisions. A small fleet is judged in this process: starting workers would cost more
than it saves.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from gpuadvisor.decision.words import format_measure
from gpuadvisor.errors import GpuAdvisorError
from gpuadvisor.fleet.judgement import judgement
from gpuadvisor.fleet.model import Fix, HostPurchase, HostVerdict
from gpuadvisor.fleet.profiles import Group
from gpuadvisor.fleet.readings import HostReading
from gpuadvisor.fleet.snapshot import Context, snapshot_of

if TYPE_CHECKING:
    from gpuadvisor.decision.build import Advisor
    from gpuadvisor.decision.model import Decision
    from gpuadvisor.engine.policy import Policy
    from gpuadvisor.host.schema import Gpu, HostSnapshot

#: Fewer hosts than this are judged in this process.
PARALLEL_FROM: Final = 64
#: Hosts per chunk sent to a worker, at most.
MAX_CHUNK: Final = 100


@dataclass(frozen=True)
class Job:
    group: str
    reading: HostReading
    missing: tuple[str, ...]


@dataclass(frozen=True)
class Setup:
    """What every worker needs, sent once when it starts."""

    groups: tuple[Group, ...]
    context: Context
    catalog_overlays: tuple[Path, ...] = ()
    rules_overlays: tuple[Path, ...] = ()


class _Judge:
    def __init__(self, setup: Setup) -> None:
        from gpuadvisor.decision.build import Advisor
        from gpuadvisor.engine.core import Engine
        from gpuadvisor.engine.rules import load_rules
        from gpuadvisor.inputs.catalog import load_catalog

        self.setup = setup
        self.groups = {g.name: g for g in setup.groups}
        rules = load_rules(list(setup.rules_overlays))
        self.advisor: Advisor = Advisor(Engine(load_catalog(list(setup.catalog_overlays)), rules))

    def __call__(self, job: Job) -> HostVerdict:
        from gpuadvisor.pipeline import advise_profile

        group = self.groups[job.group]
        snapshot = snapshot_of(job.reading, self.setup.context)
        try:
            decision = advise_profile(
                group.profile,
                profile_sha256=group.profile_sha256,
                profile_file=group.profile_path.name,
                sensitivity=False,
                advisor=self.advisor,
                sizing=group.sizing,
                snapshot=snapshot,
                gpu_readings=False,
            )
        except GpuAdvisorError as exc:
            return _unjudged(job, snapshot, str(exc))
        return verdict_of(job, snapshot, decision, group, self.advisor)


def verdict_of(
    job: Job, snapshot: HostSnapshot, decision: Decision, group: Group, advisor: Advisor
) -> HostVerdict:
    rules = advisor.engine.rules
    fixes = tuple(
        Fix(
            rule=f.rule,
            category=f.category,
            severity=rules.get(f.rule).data.severity,
            title=f.title,
            evidence="; ".join(f"{v.name} = {format_measure(v.value, v.unit)}" for v in f.facts)
            or f.evidence,
            action=f.action,
            sources=tuple(
                dict.fromkeys(v.source for v in f.facts if v.source not in _NOT_MEASURED)
            ),
        )
        for f in decision.fix_first
    )
    measured = [
        f.rule for f in decision.findings if any(v.source not in _NOT_MEASURED for v in f.facts)
    ]
    judge = judgement()
    idle = [g for g in snapshot.gpus if judge.gpu_idle(g.utilisation.gpu_pct, _used_pct(g))]
    status = judge.host_status(
        tuple(f.category for f in fixes), bool(snapshot.gpus) and len(idle) == len(snapshot.gpus)
    )
    need = decision.sizing.vram_need_gib
    jobs = 0 if status == "failing" or need is None else idle_jobs(idle, group, need, rules.policy)
    purchase = _purchase(decision)
    return HostVerdict(
        host=job.reading.host,
        group=job.group,
        status=status,
        gpus=len(snapshot.gpus),
        gpu_models=_models(snapshot),
        severity=min((f.severity for f in fixes), key=_SEVERITY.index, default=None),
        fixes=fixes,
        findings=tuple(dict.fromkeys([f.rule for f in fixes] + measured)),
        idle_gpus=tuple(g.index for g in idle if g.index is not None),
        idle_jobs=jobs,
        purchase=purchase,
        helps=status == "healthy" and purchase is not None,
        headline=decision.recommendation.headline,
        missing=job.missing,
    )


_SEVERITY: Final = ("blocker", "warning", "advice", "info")
#: Fact sources that are not measurements.
_NOT_MEASURED: Final = frozenset({"profile", "catalog", ""})


def _unjudged(job: Job, snapshot: HostSnapshot, why: str) -> HostVerdict:
    return HostVerdict(
        host=job.reading.host,
        group=job.group,
        status="unjudged",
        gpus=len(snapshot.gpus),
        gpu_models=_models(snapshot),
        severity=None,
        fixes=(),
        findings=(),
        idle_gpus=(),
        idle_jobs=0,
        purchase=None,
        helps=False,
        headline="",
        missing=job.missing,
        error=why[:500],
    )


def _models(snapshot: HostSnapshot) -> tuple[str, ...]:
    counted = Counter(g.name or "unnamed GPU" for g in snapshot.gpus)
    return tuple(f"{n} x {name}" for name, n in sorted(counted.items()))


def _used_pct(gpu: Gpu) -> float | None:
    if gpu.memory_used_mib is None or not gpu.memory_total_mib:
        return None
    return 100.0 * gpu.memory_used_mib / gpu.memory_total_mib


def idle_jobs(idle: Sequence[Gpu], group: Group, need_gib: float, policy: Policy) -> int:
    """Jobs of the group's profile the idle GPUs can hold: as many per card as its
    memory holds when the workload shares cards (the engine's policy), else one per
    card the job fits, ``gpus_per_job`` cards per job."""
    workload = group.profile.workload
    kind = workload.kind
    per_card = [
        policy.jobs_per_card(kind, need_gib, g.memory_total_mib / 1024)
        for g in idle
        if g.memory_total_mib
    ]
    if policy.shares_cards(kind, group.profile.requirements.vgpu):
        return sum(per_card)
    return sum(1 for n in per_card if n >= 1) // workload.gpus_per_job


def _purchase(decision: Decision) -> HostPurchase | None:
    """The top pick, when the decision buys cards (not 'buy nothing')."""
    if not decision.picks or decision.recommendation.action == "keep":
        return None
    pick = decision.picks[0]
    if pick.action == "keep" or pick.count == 0:
        return None
    capacity = decision.recommendation.capacity
    return HostPurchase(
        sku=pick.sku,
        name=pick.name,
        count=pick.count,
        action=pick.action,
        unit_price_usd=pick.price_usd,
        total_usd=pick.total_price_usd,
        price_kind=pick.price_kind,
        jobs_wanted=capacity.jobs_wanted if capacity else pick.jobs_wanted,
        jobs_served=capacity.jobs_served if capacity else pick.jobs_served,
    )


# -- the pool -------------------------------------------------------------------------

_WORKER: list[_Judge] = []


def _start_worker(setup: Setup) -> None:
    _WORKER.append(_Judge(setup))


def _judge_chunk(jobs: list[Job]) -> list[HostVerdict]:
    judge = _WORKER[0]
    return [judge(job) for job in jobs]


def default_workers() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def judge_all(
    jobs: Sequence[Job], setup: Setup, *, workers: int | None = None
) -> list[HostVerdict]:
    """A verdict per job, in the jobs' order."""
    workers = default_workers() if workers is None else max(1, workers)
    if workers == 1 or len(jobs) < PARALLEL_FROM:
        judge = _Judge(setup)
        return [judge(job) for job in jobs]
    size = max(1, min(MAX_CHUNK, math.ceil(len(jobs) / (workers * 4))))
    chunks = [list(jobs[i : i + size]) for i in range(0, len(jobs), size)]
    # spawn: a worker starts from a clean interpreter, whatever threads this one ran
    # (the queries) and on every platform alike.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=min(workers, len(chunks)),
        mp_context=context,
        initializer=_start_worker,
        initargs=(setup,),
    ) as pool:
        return [verdict for chunk in pool.map(_judge_chunk, chunks) for verdict in chunk]
