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

from gpuadvisor.decision.build import Advisor, decide
from gpuadvisor.decision.model import Decision, EvidenceRef, MeasuredGpu
from gpuadvisor.engine.core import Engine
from gpuadvisor.engine.facts import build_facts
from gpuadvisor.engine.rules import RuleBase, load_rules
from gpuadvisor.inputs.catalog import Catalog, load_catalog
from gpuadvisor.inputs.profile import Profile, profile_from_data
from gpuadvisor.inputs.textio import decode_text, parse_document, read_bytes


def decision_date() -> dt.date:
    """The decision's date, which prices' ages are counted to: SOURCE_DATE_EPOCH's day
    when it is set (reproducible output), else today."""
    from gpuadvisor.render.report import report_date

    stated = report_date()
    return dt.date.fromisoformat(stated) if stated else dt.date.today()


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
        evidence=evidence,
        catalog_overlays=catalog_overlays,
        rules_overlays=rules_overlays,
        sensitivity=sensitivity,
        catalog=catalog,
        rules=rules,
        advisor=advisor,
    )


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
) -> Decision:
    """The decision for an already validated profile (``ask --advise`` has no file yet).

    ``profile_sha256`` and ``profile_file`` are what the report cites as its input. A
    caller that makes many decisions passes one ``advisor`` (it holds the catalog, the
    rules and every cache); otherwise one is made from ``catalog`` and ``rules``, or
    from the bundled files and the overlays.
    """
    if advisor is None:
        catalog = catalog or load_catalog(catalog_overlays)
        advisor = Advisor(Engine(catalog, rules or load_rules(rules_overlays)))
    catalog = advisor.engine.catalog
    refs: tuple[EvidenceRef, ...] = ()
    host_values = None
    host_sources = None
    gpus: tuple[MeasuredGpu, ...] = ()
    if evidence:
        from gpuadvisor.decision.measured import measured_gpus
        from gpuadvisor.engine.hostfacts import derive_host_facts
        from gpuadvisor.evidence import load_evidence

        snapshot = load_evidence(list(evidence))
        gpus = measured_gpus(snapshot)
        derived = derive_host_facts(snapshot)
        host_values, host_sources = derived.values, derived.sources
        refs = tuple(
            EvidenceRef(file=src.file, kind=src.kind, sha256=src.sha256) for src in snapshot.sources
        )
    facts = build_facts(profile, catalog, host_values, host_sources)
    return decide(
        profile,
        advisor,
        facts,
        profile_sha256=profile_sha256,
        profile_file=profile_file,
        evidence=refs,
        measured_gpus=gpus,
        sensitivity=sensitivity,
        as_of=decision_date(),
    )
