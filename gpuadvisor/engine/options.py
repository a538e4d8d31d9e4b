"""Purchase options: which (shape, SKU, count) combinations exist, beside or instead of
the cards already in the host, what each serves and what it costs over its life.

Pure functions over facts and catalog entries; no rule logic lives here. Capacity comes
from :mod:`gpuadvisor.engine.capacity` (usable memory, headroom, jobs per card), the
numbers behind it from the policy file. Options of every count from one card to what
the chassis takes are generated, so a purchase that serves some of the jobs is weighed
beside one that serves them all (partial scale-out). How options of one kind are ranked
is :mod:`gpuadvisor.engine.ranking`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from gpuadvisor.engine.capacity import CardFit, FitRow, per_job_gib
from gpuadvisor.engine.decode import floor as decode_floor
from gpuadvisor.engine.displays import NO_OUTFIT, Outfit, cards_for_displays, outfit_for
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.makers import OptionMaker, OverHosts
from gpuadvisor.engine.option import Action, Option
from gpuadvisor.engine.plan import DECODE_AT, DISPLAYS_AT, OUTFIT_AT, Plan, option_plan
from gpuadvisor.engine.policy import Policy
from gpuadvisor.inputs.accessories import Accessory
from gpuadvisor.inputs.catalog import Sku
from gpuadvisor.vocabulary import SHAPES, Shape

#: The shapes options are generated for, simplest first (every shape of the contract).
OPTION_SHAPES: tuple[Shape, ...] = SHAPES


#: Model parallelism across more than eight cards is NVLink-switch territory (a DGX or
#: HGX board), not a host built from PCIe cards.
MAX_SPLIT = 8

#: Model parallelism (and a sharded data-parallel job) replicates some state (embeddings,
#: activations at the cut, communication buffers); planning on 15% of each card's memory
#: for that is a common rule of thumb.
SHARDING_OVERHEAD = 0.15


def _dp_counts(jobs: int, count_max: int, per_job_cards: int) -> list[tuple[int, int]]:
    """(cards, cards per job) of the data-parallel options: whole jobs of
    ``gpus_per_job`` cards, or one job over 2 to ``gpu_count_max`` cards."""
    if per_job_cards >= 2:
        most = max(1, min(jobs, count_max // per_job_cards))
        return [(per_job_cards * k, per_job_cards) for k in range(1, most + 1)]
    return [(c, c) for c in range(2, count_max + 1)] if jobs == 1 else []


def _dp_memory(usable: float, cards_per_job: int, sharded: bool) -> float:
    if sharded:
        return round(usable * (1 - SHARDING_OVERHEAD) * cards_per_job, 3)
    return usable


def _params(plan: Plan) -> tuple[int, int, int, bool, bool, tuple[object, ...], bool]:
    """The counts one host's options are made from (jobs: one host's share)."""
    jobs, count_max, per_job_cards, data_parallel, sharded, existing, split_ready = plan[0][:7]
    assert isinstance(jobs, int) and isinstance(count_max, int) and isinstance(existing, tuple)
    assert isinstance(per_job_cards, int) and isinstance(sharded, bool)
    return (
        jobs,
        count_max,
        per_job_cards,
        bool(data_parallel),
        sharded,
        existing,
        bool(split_ready),
    )


def _spread(plan: Plan) -> tuple[int, int]:
    """(hosts, jobs wanted over all of them) of a plan."""
    hosts, wanted = plan[0][7:9]
    assert isinstance(hosts, int) and isinstance(wanted, int)
    return hosts, wanted


def display_floor(sku: Sku, plan: Plan) -> int:
    """The fewest cards of ``sku`` one host's displays take (1 without a display need):
    a lower bound on an option's count (:mod:`gpuadvisor.engine.displays`)."""
    need = plan[0][DISPLAYS_AT]
    assert isinstance(need, tuple)
    return cards_for_displays(sku, int(need[0]), str(need[1]))


def _maker(maker: OptionMaker | None, plan: Plan) -> OptionMaker | OverHosts:
    """What makes a plan's options: ``maker`` (else one of their own), through the
    plan's hosts when there are several (one host: its options serve its own jobs)."""
    make = OptionMaker() if maker is None else maker
    hosts, wanted = _spread(plan)
    outfit = outfit_of_plan(plan)
    if hosts == 1 and outfit == NO_OUTFIT:
        return make  # one host, no accessories: the maker itself (one call less)
    return OverHosts(make, hosts, wanted, outfit)


def outfit_of_plan(plan: Plan) -> Outfit:
    """What decides the accessories of a plan's options (:class:`Outfit`)."""
    outfit = plan[0][OUTFIT_AT]
    assert isinstance(outfit, Outfit)
    return outfit


def kept_model(skus: tuple[Sku, ...], plan: Plan) -> Sku | None:
    """The catalog entry of the host's cards when options can keep them."""
    existing = plan[0][5]
    assert isinstance(existing, tuple)
    if len(existing) != 3:
        return None
    return next(s for s in skus if s.id == existing[1])


def sku_options(
    sku: Sku,
    fit_row: FitRow,
    plan: Plan,
    kept_sku: Sku | None,
    maker: OptionMaker | None = None,
) -> list[Option]:
    """The options of one SKU in a plan: one card, independent jobs over 2 and more, a
    split model, a data-parallel job, and cards of this SKU added beside the kept ones.
    They depend only on this SKU's row of the plan and the plan's counts (what a memo
    keys a block of them on). ``maker`` makes them (a memo's, which shares equal options
    between blocks; else one of their own)."""
    make = _maker(maker, plan)
    jobs, count_max, per_job_cards, data_parallel, sharded, existing, split_ready = _params(plan)
    base: Action = "replace" if existing else "new"
    per_card, usable, basis, job = fit_row
    per_job = per_job_gib(CardFit(usable, basis, per_card, sku.gpus_per_board, job))
    # The displays bound each host's cards from below (FIT rules judge if they fit).
    floor = display_floor(sku, plan)
    options = [
        make.option("single-larger-gpu", sku, floor, per_job, min(jobs, per_card), action=base)
    ]
    # The jobs' cards, or more where the video streams need more decoders (a lower bound).
    most = max(
        math.ceil(jobs / per_card) if jobs >= 2 else 1, decode_floor(sku, plan[0][DECODE_AT])
    )
    if most >= 2:
        counts = range(2, min(count_max, most) + 1)
        for cards in sorted({max(c, floor) for c in counts}):
            served = min(jobs, cards * per_card)
            options.append(
                make.option("two-independent-jobs", sku, cards, per_job, served, action=base)
            )
    # Every group size a split model could take (FIT-001 keeps those that hold it, the
    # ranking prefers the fewest), so the options do not depend on the need; a team that
    # cannot run one gets the smallest, for TEAM-001 to name.
    for split in range(2, max(2, min(count_max, MAX_SPLIT) if split_ready else 2) + 1):
        replicas = max(1, min(jobs, count_max // split)) if split_ready else 1
        options.append(
            make.option(
                "multi-gpu-model-parallel",
                sku,
                split * replicas,
                round(usable * (1 - SHARDING_OVERHEAD) * split, 3),
                replicas,
                cards_per_job=split,
                action=base,
            )
        )
    for cards, per in _dp_counts(jobs, count_max, per_job_cards) if data_parallel else ():
        options.append(
            make.option(
                "multi-gpu-data-parallel",
                sku,
                cards,
                _dp_memory(usable, per, sharded),
                min(jobs, cards // per),
                cards_per_job=per,
                action=base,
            )
        )
    if kept_sku is not None:
        options += _added(sku, fit_row, plan, kept_sku, make)
    return options


def block_key(sku: Sku, fit_row: FitRow, plan: Plan) -> tuple[object, ...]:
    """Everything :func:`sku_options` reads for this SKU, reduced to what changes its
    options: plans that differ elsewhere (a larger chassis, more jobs than cards) share
    the block. ``tests/test_option_blocks.py`` holds equal keys to equal options."""
    return sku_block_key(sku, fit_row, plan, plan_block_key(plan))


def plan_block_key(plan: Plan) -> tuple[object, ...]:
    """The part of every SKU's :func:`block_key` that the plan alone decides (worked
    out once per plan): whether cards are replaced, the split-model groups (cards per
    group, groups), the data-parallel groups (cards, cards per job, jobs served) and
    what adding cards beside the kept ones depends on."""
    jobs, count_max, per_job_cards, data_parallel, sharded, existing, split_ready = _params(plan)
    top = max(2, min(count_max, MAX_SPLIT) if split_ready else 2)
    splits = tuple(
        (split, max(1, min(jobs, count_max // split)) if split_ready else 1)
        for split in range(2, top + 1)
    )
    counts = _dp_counts(jobs, count_max, per_job_cards) if data_parallel else []
    groups: tuple[object, ...] = ()
    if counts:
        groups = (tuple((c, per, min(jobs, c // per)) for c, per in counts), sharded)
    added = (existing, count_max, jobs, _one_job_over_cards(plan)) if len(existing) == 3 else None
    hosts, wanted = _spread(plan)
    # One host: its options serve its jobs, counted in ``spread``. More: the purchase
    # serves the wanted jobs spread over them.
    over_hosts = (hosts, wanted) if hosts > 1 else ()
    return (bool(existing), splits, groups, added, over_hosts)


def sku_block_key(sku: Sku, fit_row: FitRow, plan: Plan, shared: object) -> tuple[object, ...]:
    """:func:`block_key` given the plan's part of it (:func:`plan_block_key`), or what
    stands for that part one to one (the memo's number for it)."""
    jobs, count_max = plan[0][0], plan[0][1]
    assert isinstance(jobs, int) and isinstance(count_max, int)
    per_card = fit_row[0]
    if per_card == 1:
        spread: tuple[int, ...] = (min(count_max, jobs),)
    else:
        spread = (jobs, min(count_max, math.ceil(jobs / per_card)))
    params = plan[0]
    # The needs beside memory and jobs, read only when the plan has them (the key is
    # built for every SKU of every plan the memo has not seen).
    if params[DECODE_AT] is not None:  # video streams to decode
        least = decode_floor(sku, params[DECODE_AT])
        if least >= 2:
            spread = (*spread, min(count_max, least))
    need = params[DISPLAYS_AT]
    floor = display_floor(sku, plan) if isinstance(need, tuple) and need[0] else 1
    outfit = params[OUTFIT_AT]
    if outfit != NO_OUTFIT:
        outfit = outfit_for(sku, outfit_of_plan(plan))
    return (sku.id, fit_row, spread, floor, outfit, shared)


def _added(
    sku: Sku,
    fit_row: FitRow,
    plan: Plan,
    kept_sku: Sku,
    make: OptionMaker | OverHosts,
) -> list[Option]:
    """Cards of ``sku`` added beside the kept ones, for independent jobs (any card that
    holds a job works beside them)."""
    jobs, count_max, _, _, _, existing, _ = _params(plan)
    kept, _, kept_fit = existing
    assert isinstance(kept, int) and isinstance(kept_fit, tuple)
    per_card_k, _, _, per_job_k = kept_fit
    per_card, usable, basis, job = fit_row
    per_job_new = per_job_gib(CardFit(usable, basis, per_card, sku.gpus_per_board, job))
    room = count_max - kept
    served_k = min(jobs, kept * per_card_k)
    if jobs < 2 or served_k >= jobs or room < 1 or _one_job_over_cards(plan):
        return []
    per_job = min(per_job_k, per_job_new)
    most = min(room, math.ceil((jobs - kept * per_card_k) / per_card))
    return [
        make.option(
            "two-independent-jobs",
            sku,
            cards,
            per_job,
            min(jobs, kept * per_card_k + cards * per_card),
            kept=kept,
            kept_sku=kept_sku,
            action="add",
        )
        for cards in range(1, most + 1)
    ]


def _one_job_over_cards(plan: Plan) -> bool:
    jobs, _, _, data_parallel, _, existing, _ = _params(plan)
    kept = existing[0] if existing else 0
    assert isinstance(kept, int)
    return data_parallel and jobs == 1 and kept >= 2


def kept_options(plan: Plan, kept_sku: Sku, maker: OptionMaker | None = None) -> list[Option]:
    """Keeping the host's cards (buying nothing), and adding cards of their model for
    one job over cards (data-parallel or a split model); ``maker`` as in
    :func:`sku_options`."""
    make = _maker(maker, plan)
    jobs, count_max, per_job_cards, data_parallel, sharded, existing, split_ready = _params(plan)
    kept, _, kept_fit = existing
    assert isinstance(kept, int) and isinstance(kept_fit, tuple)
    per_card_k, usable_k, _, per_job_k = kept_fit
    over_cards = _one_job_over_cards(plan)
    shape: Shape = (
        "single-larger-gpu"
        if kept == 1
        else ("multi-gpu-data-parallel" if over_cards else "two-independent-jobs")
    )
    options = [
        make.option(
            shape,
            kept_sku,
            0,
            _dp_memory(usable_k, kept, sharded) if over_cards else per_job_k,
            1 if over_cards else min(jobs, kept * per_card_k),
            kept=kept,
            kept_sku=kept_sku,
            cards_per_job=kept if over_cards else 1,
            action="keep",
        )
    ]
    if data_parallel and jobs == 1:
        for cards, per in _dp_counts(jobs, count_max, per_job_cards):
            if cards > kept:
                options.append(
                    make.option(
                        "multi-gpu-data-parallel",
                        kept_sku,
                        cards - kept,
                        _dp_memory(usable_k, per, sharded),
                        1,
                        kept=kept,
                        kept_sku=kept_sku,
                        cards_per_job=per,
                        action="add",
                    )
                )
    if jobs == 1 and split_ready:
        for split in range(max(2, kept + 1), min(count_max, MAX_SPLIT) + 1):
            options.append(
                make.option(
                    "multi-gpu-model-parallel",
                    kept_sku,
                    split - kept,
                    round(usable_k * (1 - SHARDING_OVERHEAD) * split, 3),
                    1,
                    kept=kept,
                    kept_sku=kept_sku,
                    cards_per_job=split,
                    action="add",
                )
            )
    return options


def options_of_plan(
    skus: tuple[Sku, ...], plan: Plan, accessories: Sequence[Accessory] = ()
) -> list[Option]:
    """The options a plan of :func:`option_plan` describes: each SKU's, then those that
    keep the host's cards (with the catalog's ``accessories`` they need)."""
    kept_sku = kept_model(skus, plan)
    options: list[Option] = []
    maker = OptionMaker(accessories)
    for sku, row in zip(skus, plan[1], strict=True):
        options += sku_options(sku, row, plan, kept_sku, maker)
    if kept_sku is not None:
        options += kept_options(plan, kept_sku, maker)
    return options


def generate_options(
    skus: tuple[Sku, ...],
    facts: Mapping[str, Value],
    policy: Policy,
    accessories: Sequence[Accessory] = (),
) -> list[Option]:
    """Every option worth evaluating; constraints are judged later, by the rules."""
    return options_of_plan(skus, option_plan(skus, facts, policy), accessories)
