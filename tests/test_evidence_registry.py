"""Every evidence format is registered once, completely (gpuadvisor/evidence/formats.py).

A format is a value of the contract's ``EvidenceKind``, a check in ``_detect``, a parser
module and a row of ``FORMATS``; these tests fail when one of them is missing, and when
a format has no sample under tests/fixtures/evidence.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import get_args

from gpuadvisor import evidence
from gpuadvisor.evidence import FORMATS, _detect, detect, load_evidence, parse_text
from gpuadvisor.evidence.formats import NOT_FILE_KINDS, format_of
from gpuadvisor.host.schema import EvidenceKind

from .evidence_support import FIXTURES, fixture_files, fixture_text

#: Public modules of gpuadvisor/evidence/ that parse no format.
NOT_PARSERS = frozenset({"formats", "merge"})


def test_every_kind_of_the_contract_has_one_row() -> None:
    kinds = [f.kind for f in FORMATS]
    assert len(kinds) == len(set(kinds)), "a kind has two rows"
    assert set(kinds) | set(NOT_FILE_KINDS) == set(get_args(EvidenceKind))
    assert not set(kinds) & set(NOT_FILE_KINDS)
    for fmt in FORMATS:
        assert format_of(fmt.kind) is fmt


def test_every_row_names_a_check_and_a_parser() -> None:
    for fmt in FORMATS:
        assert fmt.looks_like is getattr(_detect, fmt.module), fmt.kind
        assert fmt.description, fmt.kind
        parser = fmt.parse
        assert parser.__module__ == f"gpuadvisor.evidence.{fmt.module}"
        assert list(inspect.signature(parser).parameters) == ["text", "name"]


def test_every_parser_module_has_a_row() -> None:
    folder = Path(evidence.__file__).parent
    modules = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    assert modules - NOT_PARSERS == {f.module for f in FORMATS}
    for name in NOT_PARSERS:
        assert not hasattr(importlib.import_module(f"gpuadvisor.evidence.{name}"), "parse")


def test_every_format_has_a_fixture() -> None:
    found = {detect(fixture_text(p), p.name) for p in fixture_files()}
    assert {f.kind for f in FORMATS} - found == set()


def test_xml_twin_of_the_text_report_reads_the_same() -> None:
    """xml-twin-two-gpu-q.xml is two-gpu-q.txt written as ``nvidia-smi -q -x`` would."""
    text = parse_text((FIXTURES / "two-gpu-q.txt").read_text(), "q.txt")
    xml = parse_text((FIXTURES / "xml-twin-two-gpu-q.xml").read_text(), "q.xml")
    assert xml == text
    assert len(xml.gpus) == 2


def test_host_v1_fixture_is_the_import_of_its_source() -> None:
    """host-v1-two-gpu-q.json is ``gpuadvisor import two-gpu-q.txt`` run in its folder."""
    written = parse_text((FIXTURES / "host-v1-two-gpu-q.json").read_text(), "host.json")
    source = FIXTURES / "two-gpu-q.txt"
    imported = load_evidence([source])
    # The import named the file as given on its command line: without the folder.
    named = imported.model_copy(
        update={
            "sources": [s.model_copy(update={"file": source.name}) for s in imported.sources],
            "provenance": {
                part: [source.name if f == str(source) else f for f in files]
                for part, files in imported.provenance.items()
            },
            "gpus": [
                g.model_copy(
                    update={
                        "provenance": {
                            path: source.name if f == str(source) else f
                            for path, f in g.provenance.items()
                        }
                    }
                )
                for g in imported.gpus
            ],
        }
    )
    assert written == named


def test_a_host_v1_file_written_before_per_value_provenance_still_reads() -> None:
    """host/v1 grows only by additions: a file from before ``gpus[].provenance`` and
    ``conflicts[].gpu`` reads the same values, with the provenance left empty."""
    old = parse_text(
        (FIXTURES / "host-v1-two-gpu-q-before-provenance.json").read_text(), "old.json"
    )
    new = parse_text((FIXTURES / "host-v1-two-gpu-q.json").read_text(), "new.json")
    assert [g.provenance for g in old.gpus] == [{}, {}]
    assert [g.model_copy(update={"provenance": {}}) for g in new.gpus] == old.gpus
