"""Evidence parsers are imported only for the formats a run reads.

Each check runs in a fresh interpreter: this test session has imported every parser
already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

from gpuadvisor.evidence import FORMATS, _detect, _matrix
from gpuadvisor.host.schema import HOST_SCHEMA, P2PStatus

from .evidence_support import FIXTURES, fixture_files

REPO = Path(__file__).resolve().parents[1]
PARSERS = sorted(f"gpuadvisor.evidence.{f.module}" for f in FORMATS)


def _run(script: str) -> Any:
    """Run ``script`` in a new interpreter at the repository root; its last line of
    output, as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


_PRELUDE = f"""
import json, sys
from pathlib import Path
PARSERS = {PARSERS!r}
def loaded():
    return sorted(m for m in PARSERS if m in sys.modules)
"""


def test_three_captures_import_their_three_parsers() -> None:
    files = [
        REPO / "examples/evidence/input-bound-host/nvidia-smi-dmon.txt",
        REPO / "examples/evidence/input-bound-host/iostat-x.txt",
        FIXTURES / "seed-mpstat.txt",
    ]
    script = (
        _PRELUDE
        + f"""
import gpuadvisor.evidence as evidence
after_import = loaded()
models_after_import = "gpuadvisor.host.schema" in sys.modules
files = [Path(p) for p in {[str(p) for p in files]!r}]
kinds = [evidence.detect(p.read_text(encoding="utf-8"), p.name) for p in files]
after_detect = loaded()
models_after_detect = "gpuadvisor.host.schema" in sys.modules
host = evidence.load_evidence(files)
print(json.dumps({{
    "after_import": after_import,
    "models_after_import": models_after_import,
    "kinds": kinds,
    "after_detect": after_detect,
    "models_after_detect": models_after_detect,
    "after_load": loaded(),
    "disks": len(host.host.disks),
}}))
"""
    )
    seen = _run(script)
    assert seen["kinds"] == ["nvidia-smi-dmon", "iostat", "mpstat"]
    # Importing the package and telling formats apart import no parser, nor the models.
    assert seen["after_import"] == [] and not seen["models_after_import"]
    assert seen["after_detect"] == [] and not seen["models_after_detect"]
    assert seen["after_load"] == [
        "gpuadvisor.evidence.dmon",
        "gpuadvisor.evidence.iostat",
        "gpuadvisor.evidence.mpstat",
    ]
    assert seen["disks"] > 0  # the files were read, not just named


def test_each_format_imports_only_its_own_parser() -> None:
    """Every fixture, read alone: the parsers imported are the one of its format."""
    files = [str(p) for p in fixture_files()]
    script = (
        _PRELUDE
        + f"""
from gpuadvisor.evidence import FORMATS, parse_text, detect
from gpuadvisor.inputs.textio import decode_capture
module = {{f.kind: "gpuadvisor.evidence." + f.module for f in FORMATS}}
found = []
for name in {files!r}:
    for parser in PARSERS:  # forget the parsers earlier files imported
        sys.modules.pop(parser, None)
    text = decode_capture(Path(name).read_bytes(), name)
    kind = detect(text, name)
    parse_text(text, name)
    found.append([name, module[kind], loaded()])
print(json.dumps(found))
"""
    )
    found = _run(script)
    assert len(found) == len(files)
    for name, parser, imported in found:
        assert imported == [parser], name
    assert len({parser for _, parser, _ in found}) >= 12  # most formats were covered


def test_detection_copies_of_model_constants_match_the_models() -> None:
    """Detection spells out two model constants rather than import the models."""
    assert _detect.HOST_SCHEMA == HOST_SCHEMA
    assert frozenset(get_args(P2PStatus)) == _matrix.P2P_STATUSES
