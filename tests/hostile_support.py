"""What every hostile-input test checks, and the small valid inputs the cases start from.

A refused input must give exit code 2, a message on stderr that names the file and the
line or the field, no traceback, no output on stdout, and nothing new or changed on disk
(no partial file, no temporary file, an existing output left as it was).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .conftest import REPO, CliResult

Cli = Callable[..., CliResult]

PROFILE = """schema = "gpuadvisor/profile/v1"
[meta]
title = "Hostile input test"
[workload]
kind = "inference"
objective = "latency"
vram_need_gib = 20
"""

#: A catalog overlay entry that patches a price (valid as it stands).
PATCH = """id = "rtx-6000-ada"
patch = true
price_usd = 3900.0
price_date = 2026-01-15
price_source = "https://www.nvidia.com/en-us/design-visualization/rtx-6000/"
"""

#: A bundled rule whose copy in an overlay folder replaces it (valid as it stands).
RULE_FILE = REPO / "rules" / "preference" / "JOBS-001.toml"
RULE = RULE_FILE.read_text(encoding="utf-8")

#: A short evidence capture that parses (nvidia-smi -L).
EVIDENCE = "GPU 0: NVIDIA RTX A5000 (UUID: GPU-4b8a1c2d-0000-0000-0000-000000000000)\n"


@dataclass(frozen=True)
class Inputs:
    """A tmp folder with one valid input of each kind, to break one at a time."""

    root: Path
    profile: Path
    evidence: Path
    catalog: Path
    rules: Path
    templates: Path

    def write(self, name: str, data: str | bytes) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
        return path


def make_inputs(root: Path) -> Inputs:
    profile = root / "profile.toml"
    profile.write_text(PROFILE, encoding="utf-8")
    evidence = root / "smi-L.txt"
    evidence.write_text(EVIDENCE, encoding="utf-8")
    catalog = root / "catalog-overlay"
    catalog.mkdir()
    (catalog / "price.toml").write_text(PATCH, encoding="utf-8")
    rules = root / "rules-overlay"
    rules.mkdir()
    (rules / "JOBS-001.toml").write_text(RULE, encoding="utf-8")
    templates = root / "templates"
    templates.mkdir()
    return Inputs(root, profile, evidence, catalog, rules, templates)


def disk_state(root: Path) -> dict[str, str]:
    """Every file below ``root`` (hidden ones too) and a digest of its bytes."""
    state: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            state[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif not path.is_dir():
            state[str(path.relative_to(root))] = "special"
    return state


def assert_refused(
    result: CliResult,
    *fragments: str,
    where: str | None = None,
) -> None:
    """Exit 2 with a clean message holding ``fragments`` and naming ``where`` (a file,
    a field or an option)."""
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.stdout[:300])
    assert "Traceback" not in result.stderr + result.stdout
    assert "internal error" not in result.stderr
    assert result.stdout == "", result.stdout[:300]
    message = result.stderr
    assert message.startswith("gpuadvisor: error: ") or "Error:" in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    if where is not None:
        assert where in message, (where, message)


def run_refused(
    cli: Cli,
    inputs: Inputs,
    args: list[str],
    *fragments: str,
    where: str | None = None,
    stdin: str = "",
) -> CliResult:
    """Run a command that must be refused and check that the disk did not change."""
    before = disk_state(inputs.root)
    result = cli(*args, stdin=stdin)
    assert_refused(result, *fragments, where=where)
    assert disk_state(inputs.root) == before, "a refused run changed files on disk"
    return result
