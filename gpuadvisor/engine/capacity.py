"""How much of a card a job can use, and how many jobs a card holds.

The arithmetic behind capacity, over the numbers of :mod:`gpuadvisor.engine.policy`:
usable memory (a capture where the catalog has one, else the reserve and ECC estimate),
the ECC state a decision runs the card in, the headroom each job keeps, and the jobs one
card holds (several for work that shares a card, one otherwise). Also the cards the
evidence shows, read from the host facts. Pure functions; no words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.policy import Policy
from gpuadvisor.inputs.catalog import Catalog, Sku

MIB_PER_GIB = 1024.0


def number(facts: Mapping[str, Value], name: str) -> float:
    """A numeric fact that must be there (profile facts always are)."""
    value = facts[name]
    assert isinstance(value, (int, float)) and not isinstance(value, bool), name
    return float(value)


class CardFit(NamedTuple):
    """One card for one decision: what a process can allocate, what jobs are counted
    against (the usable memory, or the label for vGPU profiles), and the jobs it holds
    when it holds any (at least 1: a card too small for one job is still an option, with
    a job's share of memory below its need, which FIT-001 then excludes). On a board of
    several GPUs (``gpus``) the memory is one GPU's: a job sees one of them."""

    usable_gib: float
    basis_gib: float
    per_card: int
    gpus: int = 1
    #: The memory one job gets when something other than an even share decides it (a
    #: vGPU profile: :func:`profile_within_gib`); None: the even share.
    job_gib: float | None = None


def ecc_wanted(facts: Mapping[str, Value]) -> bool:
    """The profile asks for ECC (required or preferred, or silent corruption matters)."""
    return (
        facts.get("requirements.ecc") in ("required", "preferred")
        or facts.get("requirements.silent_corruption_unacceptable") is True
    )


def ecc_on(sku: Sku, wanted: bool, policy: Policy) -> bool:
    """The ECC state the card runs in: on where the profile wants it and the card can,
    and on data-center cards, which ship with it on."""
    return sku.ecc and (wanted or sku.segment in policy.memory.ecc_on_by_default)


def usable_gib(sku: Sku, wanted: bool, policy: Policy) -> float:
    """What one process can allocate on the card (on one GPU of a board of several: the
    driver reserves memory on each, and a job sees one)."""
    default_on = sku.ecc and sku.segment in policy.memory.ecc_on_by_default
    mib = policy.usable_mib(
        sku.gpu_vram_gib,
        sku.memory_type,
        ecc_on(sku, wanted, policy),
        sku.usable_vram_mib,
        default_on,
    )
    return round(mib / MIB_PER_GIB, 3)


def card_fit(
    sku: Sku, facts: Mapping[str, Value], policy: Policy, *, usable: float | None = None
) -> CardFit:
    """The fit of ``sku`` for these facts (``usable``: a measured figure instead)."""
    space = usable if usable is not None else usable_gib(sku, ecc_wanted(facts), policy)
    per_card, space, basis, job = fit_rows((sku,), (space,), facts, policy)[0]
    return CardFit(space, basis, per_card, sku.gpus_per_board, job)


#: One SKU's fit: (jobs one card holds, usable GiB, GiB the jobs are counted against,
#: GiB one job gets when a vGPU profile decides it, else None: the even share,
#: :func:`per_job_gib`, worked out only for the blocks a plan makes anew).
FitRow = tuple[int, float, float, float | None]


def _divides(size_gib: float, frame_buffer_gib: float) -> bool:
    """Whether profiles of ``size_gib`` cut ``frame_buffer_gib`` whole."""
    count = frame_buffer_gib / size_gib
    return abs(count - math.floor(count + 0.5)) < 1e-6 and count >= 1 - 1e-6


#: The sizes that cut a frame buffer whole, by (sizes, frame buffer): a catalog has a
#: handful of frame buffers, and every new plan asks for each SKU's.
_CUTTING: dict[tuple[tuple[float, ...], float], tuple[float, ...]] = {}


def cutting(sizes: tuple[float, ...], frame_buffer_gib: float) -> tuple[float, ...]:
    """The profile sizes of one GPU by the policy, ascending: the policy's sizes that
    cut its frame buffer whole, its whole frame buffer (every GPU offers a whole-GPU
    profile) and half of it when that is a whole number of GiB."""
    key = (sizes, frame_buffer_gib)
    found = _CUTTING.get(key)
    if found is None:
        if len(_CUTTING) > 1024:
            _CUTTING.clear()
        cut = {s for s in sizes if _divides(s, frame_buffer_gib)}
        cut.add(frame_buffer_gib)
        half = frame_buffer_gib / 2
        if half >= 1 and abs(half - round(half)) < 1e-9:
            cut.add(half)
        found = _CUTTING[key] = tuple(sorted(cut))
    return found


def gpu_profiles(sku: Sku, sizes: tuple[float, ...]) -> tuple[float, ...]:
    """The vGPU profile sizes of one GPU of ``sku``, ascending: the catalog's list from
    NVIDIA's vGPU types reference where it has one (an H100 NVL's 23 and 47 GB profiles
    do not cut 94 GB whole), else the policy's (:func:`cutting`)."""
    return sku.vgpu_profiles_gib or cutting(sizes, sku.gpu_vram_gib)


def profile_gib(profiles: tuple[float, ...], need_gib: float, frame_buffer_gib: float) -> float:
    """The vGPU profile a desktop of ``need_gib`` gets on a GPU of ``frame_buffer_gib``
    with these ascending ``profiles`` (:func:`gpu_profiles`): the smallest that holds
    it; the need itself when none does (then it does not fit, and FIT-001 says so)."""
    for size in profiles:
        if size >= need_gib - 1e-9:
            return size
    return max(need_gib, frame_buffer_gib)


def profile_within_gib(profiles: tuple[float, ...], share_gib: float) -> float:
    """The largest of ``profiles`` (ascending) at most ``share_gib`` (what each of fewer
    desktops than a GPU holds can be given); the share itself when none is that small."""
    found = share_gib
    for size in profiles:
        if size > share_gib + 1e-9:
            break
        found = size
    return found


def profile_usable_gib(profile: float, usable_gib: float, scale: float) -> float:
    """What a process in a vGPU profile of ``profile`` GiB can allocate: never more than
    the GPU gives a process (``usable_gib``: a whole-GPU profile keeps the driver's
    reserve and ECC's share), and for work not sized in profiles (``scale`` below 1: the
    GPU's usable share of its frame buffer) that share of the profile."""
    return min(usable_gib, round(profile * scale, 3))


def fit_rows(
    skus: tuple[Sku, ...], usable: tuple[float, ...], facts: Mapping[str, Value], policy: Policy
) -> tuple[FitRow, ...]:
    """The fit of each SKU for these facts, given each one's usable memory (one GPU's,
    :func:`usable_gib`), as numbers: (jobs one card holds, usable GiB, GiB the jobs are
    counted against, GiB one job gets); see :class:`CardFit`. On a board of several
    GPUs the jobs are counted on each GPU and the board holds that many times more.
    Work counted against the label (vGPU desktops) gets whole profiles: each desktop the
    smallest profile that holds it, and when fewer desktops are wanted than the board
    holds, the largest profile that gives each of them one (:class:`Policy`). A job in a
    profile can allocate at most what the GPU gives a process (:func:`profile_usable_gib`);
    a desktop's need is a profile's size, other work's need a share of usable memory."""
    kind = str(facts["workload.kind"])
    vgpu = facts.get("requirements.vgpu") is True
    label = policy.counts_label(kind, vgpu)
    #: Desktops (VDI) are sized in profiles: a need is a profile's size. Other work in a
    #: vGPU profile can allocate the profile's share of what the GPU gives a process.
    sized_in_profiles = policy.counts_label(kind)
    if not policy.shares_cards(kind, vgpu):
        if label:
            return tuple(
                (1, space, sku.gpu_vram_gib, min(space, sku.gpu_vram_gib))
                for sku, space in zip(skus, usable, strict=True)
            )
        return tuple((1, space, space, None) for space in usable)
    need = number(facts, "workload.vram_need_gib")
    jobs = int(number(facts, "workload.concurrent_jobs"))
    footprint = policy.job_footprint_gib(kind, need)
    sizes = policy.headroom.profiles.sizes_gib
    rows: list[FitRow] = []
    for sku, space in zip(skus, usable, strict=True):
        gpus = sku.gpus_per_board
        if label:
            basis = sku.vram_gib / gpus
            scale = 1.0 if sized_in_profiles else space / basis
            profiles = gpu_profiles(sku, sizes)
            profile = profile_gib(profiles, footprint / scale, basis)
            held = _jobs_in(basis, profile) * gpus
            per_card = max(1, min(held, jobs))
            share = _share(basis, per_card, gpus)
            job = profile_usable_gib(profile_within_gib(profiles, share), space, scale)
            rows.append((per_card, space, basis, job))
        else:
            per_card = max(1, min(_jobs_in(space, footprint) * gpus, jobs))
            rows.append((per_card, space, space, None))
    return tuple(rows)


def _jobs_in(basis_gib: float, footprint_gib: float) -> int:
    """:meth:`Policy.jobs_in`, beside the loop that asks it for every SKU."""
    return max(0, math.floor(basis_gib / footprint_gib + 1e-9))


def per_job_gib(fit: CardFit) -> float:
    """Memory one job can use on this card when it holds ``per_card`` jobs (on a board
    of several GPUs, the jobs spread over its GPUs, each GPU's memory shared by its own)."""
    if fit.job_gib is not None:
        return fit.job_gib
    return _share(fit.basis_gib, fit.per_card, fit.gpus)


def _share(basis_gib: float, per_card: int, gpus: int) -> float:
    """:func:`per_job_gib` of an even share, from its numbers (no :class:`CardFit` made:
    :func:`fit_rows` works it out for every SKU of every new plan)."""
    on_one_gpu = -(-max(per_card, 1) // gpus)  # ceil: the busiest GPU's jobs
    return round(basis_gib / on_one_gpu, 3)


class Existing(NamedTuple):
    """The cards the evidence shows, as far as options can keep them."""

    sku: Sku | None
    cards: int
    usable_gib: float | None


def _normal(name: str) -> str:
    text = name.casefold().replace("-", " ").replace("nvidia ", "")
    return " ".join(text.split())


def catalog_match(catalog: Catalog, name: str | None) -> Sku | None:
    """The catalog entry whose name the evidence's product name is, if any."""
    if not name:
        return None
    wanted = _normal(name)
    for sku in catalog.skus:
        if _normal(sku.name) == wanted:
            return sku
    return None


def existing_usable_gib(facts: Mapping[str, Value], sku: Sku, policy: Policy) -> float | None:
    """What a job can allocate on the host's cards, from the evidence: total minus the
    driver's reserve (the policy's when the capture does not show it), minus ECC's share
    when the profile wants ECC and the cards run without it."""
    total = facts.get("host.gpu_memory_total_min_mib")
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        return None
    reserved = facts.get("host.gpu_memory_reserved_max_mib")
    if not isinstance(reserved, (int, float)) or isinstance(reserved, bool):
        reserved = policy.reserve_mib(sku.vram_gib)
    mib = float(total) - float(reserved)
    if ecc_wanted(facts) and sku.ecc and facts.get("gpu.ecc_enabled_all") is not True:
        mib -= sku.vram_gib * MIB_PER_GIB * policy.ecc_share(sku.memory_type)
    return round(mib / MIB_PER_GIB, 3)


def existing_cards(facts: Mapping[str, Value], skus: tuple[Sku, ...]) -> Existing | None:
    """The cards in the evidence (None when it shows none)."""
    count = facts.get("host.gpu_count")
    if not isinstance(count, (int, float)) or isinstance(count, bool) or count < 1:
        return None
    sku_id = facts.get("host.gpu_catalog_sku")
    sku = next((s for s in skus if s.id == sku_id), None) if sku_id else None
    usable = facts.get("host.gpu_usable_gib")
    return Existing(sku, int(count), float(usable) if isinstance(usable, (int, float)) else None)
