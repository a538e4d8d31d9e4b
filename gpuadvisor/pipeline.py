"""The one path every command takes: inputs -> facts -> rules -> decision.

This is the I/O edge before the pure core: it reads the profile, the catalog, the rules
and the evidence from disk, then hands plain values to the engine
(:class:`gpuadvisor.engine.core.Engine`) and its phrasing (:mod:`gpuadvisor.decision.build`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gpuadvisor.decision.build import Advisor, decide
from gpuadvisor.decision.model import Decision, EvidenceConflict, EvidenceRef, MeasuredGpu
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.rules import RuleBase, load_rules
from gpuadvisor.inputs.catalog import Catalog, load_catalog
from gpuadvisor.inputs.profile import Profile, profile_from_data
from gpuadvisor.inputs.textio import decode_text, locate_field, parse_document, read_bytes

if TYPE_CHECKING:
    from gpuadvisor.host.schema import HostSnapshot
    from gpuadvisor.inputs.workload_model import Model
    from gpuadvisor.sizing.estimate import MemoryEstimate


def decision_date() -> dt.date:
    """The decision's date, which prices' ages are counted to: SOURCE_DATE_EPOCH's day
    when it is set (reproducible output), else today."""
    from gpuadvisor.decision.dates import report_date

    return dt.date.fromisoformat(report_date())


def read_profile(path: Path) -> tuple[Profile, str]:
    """The validated profile and the sha256 of its bytes."""
    data = read_bytes(path)
    text = decode_text(data, str(path))
    from gpuadvisor.errors import InputError

    if not text.strip():
        raise InputError("file is empty", file=str(path))
    profile = profile_from_data(parse_document(text, str(path)), name=str(path), text=text)
    return profile, hashlib.sha256(data).hexdigest()


def advise(
    profile_path: Path,
    *,
    evidence: Sequence[Path] = (),
    catalog_overlays: Sequence[Path] = (),
    rules_overlays: Sequence[Path] = (),
    sensitivity: bool = True,
    catalog: Catalog | None = None,
    rules: RuleBase | None = None,
    advisor: Advisor | None = None,
) -> Decision:
    profile, digest = read_profile(profile_path)
    return advise_profile(
        profile,
        profile_sha256=digest,
        profile_file=profile_path.name,
        sizing=size_profile(profile, profile_path),
        evidence=evidence,
        catalog_overlays=catalog_overlays,
        rules_overlays=rules_overlays,
        sensitivity=sensitivity,
        catalog=catalog,
        rules=rules,
        advisor=advisor,
    )


def size_profile(profile: Profile, profile_path: Path | None) -> MemoryEstimate | None:
    """The estimate of the profile's [workload.model] (None when it describes none).

    A decision is never sized from an estimate that leaves a term out: without a stated
    ``vram_need_gib`` that is an input error naming the term and what would give it."""
    model = profile.workload.model
    if model is None:
        return None
    estimate = estimate_model(model, profile_path)
    from gpuadvisor.decision.sizing_notes import require_complete

    require_complete(
        estimate,
        stated=profile.workload.vram_need_gib,
        file=str(profile_path) if profile_path is not None else "the profile",
    )
    return estimate


def estimate_model(model: Model, profile_path: Path | None) -> MemoryEstimate:
    """The estimate of a [workload.model], its ``hf_config`` read relative to the
    profile's folder. A problem with the description is reported against the profile
    file, with the line of the field when known."""
    from gpuadvisor.errors import InputError
    from gpuadvisor.sizing import size_model

    try:
        return size_model(model, base_dir=profile_path.parent if profile_path else None)
    except InputError as exc:
        if exc.file is not None or profile_path is None:
            raise
        text = decode_text(read_bytes(profile_path), str(profile_path))
        loc = tuple(exc.field.split(".")) if exc.field else ()
        raise InputError(
            exc.message,
            file=str(profile_path),
            line=locate_field(text, loc) if loc else None,
            field=exc.field,
            hint=exc.hint,
        ) from None


def advise_profile(
    profile: Profile,
    *,
    profile_sha256: str,
    profile_file: str,
    evidence: Sequence[Path] = (),
    catalog_overlays: Sequence[Path] = (),
    rules_overlays: Sequence[Path] = (),
    sensitivity: bool = True,
    catalog: Catalog | None = None,
    rules: RuleBase | None = None,
    advisor: Advisor | None = None,
    sizing: MemoryEstimate | None = None,
    snapshot: HostSnapshot | None = None,
    gpu_readings: bool = True,
) -> Decision:
    """The decision for an already validated profile (``ask --advise`` has no file yet).

    ``profile_sha256`` and ``profile_file`` are what the report cites as its input. A
    caller that makes many decisions passes one ``advisor`` (it holds the catalog, the
    rules and every cache); otherwise one is made from ``catalog`` and ``rules``, or
    from the bundled files and the overlays. ``sizing`` is the estimate of the profile's
    model (:func:`size_profile`); without it, one is made with ``hf_config`` read
    relative to the current folder. ``snapshot`` is host evidence already read (a
    ``fleet`` host from Prometheus), taken instead of reading ``evidence`` files;
    ``gpu_readings=False`` leaves out the per-GPU readings only a report shows.
    """
    if sizing is None and profile.workload.model is not None:
        sizing = size_profile(profile, None)
    if advisor is None:
        catalog = catalog or load_catalog(catalog_overlays)
        advisor = Advisor(Engine(catalog, rules or load_rules(rules_overlays)))
    catalog = advisor.engine.catalog
    refs: tuple[EvidenceRef, ...] = ()
    host_values = None
    host_sources = None
    gpus: tuple[MeasuredGpu, ...] = ()
    conflicts: tuple[EvidenceConflict, ...] = ()
    if evidence and snapshot is None:
        from gpuadvisor.evidence import load_evidence

        snapshot = load_evidence(list(evidence))
    if snapshot is not None:
        from gpuadvisor.decision.measured import evidence_conflicts, measured_gpus
        from gpuadvisor.engine.hostfacts import derive_host_facts

        gpus = measured_gpus(snapshot) if gpu_readings else ()
        conflicts = evidence_conflicts(snapshot)
        derived = derive_host_facts(snapshot)
        host_values, host_sources = derived.values, derived.sources
        refs = tuple(
            EvidenceRef(file=src.file, kind=src.kind, sha256=src.sha256) for src in snapshot.sources
        )
    as_of = decision_date()
    facts = build_facts(profile, catalog, host_values, host_sources, sizing=sizing, as_of=as_of)
    return decide(
        profile,
        advisor,
        facts,
        profile_sha256=profile_sha256,
        profile_file=profile_file,
        evidence=refs,
        measured_gpus=gpus,
        sensitivity=sensitivity,
        evidence_conflicts=conflicts,
        as_of=as_of,
    )
