"""Whatever text arrives, the evidence layer answers with a snapshot or an InputError,
never another exception (the CLI turns only InputError into a clean exit 2).

Three kinds of fuzzing, each bounded for CI by ``max_examples`` and a per-example
``deadline`` (a parse that suddenly takes seconds is a finding too):

- random: shuffled real lines, text from a small alphabet, truncated fixtures;
- structure-aware: real captures mutated the way pasted and hand-edited files go wrong
  (truncation, character flips, shuffled, duplicated and deleted lines, numbers replaced
  by absurd ones, stray tokens), detected as usual and also forced through every parser;
- end to end: host/v1 snapshots with mutated values through facts, decision and every
  text report format.

An input that breaks any of them is written to ``fixtures/regressions`` (see its README)
before the test fails, so the crash is kept as a regression case.

Budget: about 1,450 examples in total, a few seconds on a laptop; set
``GPUADVISOR_FUZZ_EXAMPLES`` (examples per test) for a longer run.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.decision.measured import measured_gpus
from gpuadvisor.engine.hostfacts import derive_host_facts
from gpuadvisor.errors import InputError
from gpuadvisor.evidence import FORMATS, detect, dump_snapshot, load_evidence, parse_as, parse_text
from gpuadvisor.inputs.textio import decode_capture

from .evidence_support import FIXTURES, fixture_files, fixture_text, real_fixtures_dir
from .fuzz_support import keep_as_regression, mutate

#: ``GPUADVISOR_FUZZ_EXAMPLES=20000 pytest tests/test_*fuzz*.py`` for a long local run.
EXAMPLES = int(os.environ.get("GPUADVISOR_FUZZ_EXAMPLES", "200"))
FAST = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _corpus() -> dict[str, str]:
    paths = fixture_files()
    real = real_fixtures_dir()
    if real is not None:
        paths += [p for p in real.rglob("*") if p.is_file() and p.suffix != ".md"]
    texts = {}
    for path in sorted(paths):
        try:
            texts[path.name] = fixture_text(path)
        except (InputError, OSError):
            continue
    return texts


CORPUS = _corpus()
LINES = sorted({line for path in fixture_files() for line in fixture_text(path).splitlines()})
BY_KIND: dict[str, list[str]] = {}
for _text in CORPUS.values():
    try:
        BY_KIND.setdefault(detect(_text), []).append(_text)
    except InputError:
        continue


def _survives(text: str, parse: Callable[[str], Any] | None = None) -> None:
    try:
        snapshot = (parse or (lambda t: parse_text(t, "fuzz.txt")))(text)
        derive_host_facts(snapshot)
        measured_gpus(snapshot)
        dump_snapshot(snapshot).encode("utf-8")
    except InputError:
        return
    except Exception:
        keep_as_regression(text)
        raise


# -- random ---------------------------------------------------------------------------


@FAST
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=40))
def test_shuffled_real_lines(lines: list[str]) -> None:
    _survives("\n".join(lines) + "\n")


@FAST
@given(
    st.text(
        alphabet=st.sampled_from(list("GPU0123456789:. |-+x#%=\n\tabcNVXidAER[]()eE,")),
        max_size=400,
    )
)
def test_random_text(text: str) -> None:
    _survives(text)


@FAST
@given(st.sampled_from(fixture_files()), st.data())
def test_truncated_fixtures(path: Path, data: st.DataObject) -> None:
    text = fixture_text(path)
    cut = data.draw(st.integers(min_value=1, max_value=max(1, len(text))))
    _survives(text[:cut])


# -- structure-aware ------------------------------------------------------------------


@FAST
@given(st.sampled_from(sorted(CORPUS)), st.randoms(use_true_random=False), st.integers(1, 5))
def test_mutated_real_captures(name: str, rng: random.Random, steps: int) -> None:
    _survives(mutate(CORPUS[name], rng, steps))


_BOMS = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff", "utf-32-le": b"\xff\xfe\x00\x00"}


@FAST
@given(
    st.sampled_from(sorted(CORPUS)),
    st.sampled_from(sorted(_BOMS)),
    st.randoms(use_true_random=False),
    st.integers(0, 3),
)
def test_mutated_captures_in_other_encodings(
    name: str, encoding: str, rng: random.Random, cut: int
) -> None:
    """Captures as PowerShell and Out-File write them, mutated and cut at any byte (a
    half character, a lone surrogate): read, or refused with an InputError."""
    text = mutate(CORPUS[name], rng, rng.randint(0, 3))
    data = _BOMS[encoding] + text.encode(encoding, "surrogatepass")
    data = data[: len(data) - cut]
    try:
        decoded = decode_capture(data, "fuzz.txt")
    except InputError:
        return
    _survives(decoded)


KINDS = sorted(f.kind for f in FORMATS)


@FAST
@given(st.sampled_from(KINDS), st.sampled_from(sorted(CORPUS)), st.randoms(use_true_random=False))
def test_every_parser_survives_any_capture(kind: str, name: str, rng: random.Random) -> None:
    """Each parser on its own captures and on every other format's, mutated: detection
    normally keeps them apart, but no parser may depend on it to not crash."""
    own = BY_KIND.get(kind)
    base = rng.choice(own) if own and rng.random() < 0.6 else CORPUS[name]
    text = mutate(base, rng, rng.randint(0, 3))
    _survives(text, lambda t: parse_as(kind, t, "fuzz.txt"))  # type: ignore[arg-type]


# -- end to end: host/v1 values through the decision and the reports ------------------

_GROUPS = [
    [
        "two-gpu-q.txt",
        "two-gpu-topo-nvlink-nic.txt",
        "two-gpu-dcgm.prom",
        "two-gpu-dmon-violations.txt",
        "two-gpu-p2p-cns.txt",
    ],
    ["seed-flat-dmon.txt", "pmon-dt-fb.txt", "seed-smi-L.txt"],
    [  # the shapes of issue #15
        "table-h100-mig_590.48.01_mig-devices.txt",
        "dmon-h100_590.48.01_load.txt",
        "numactl-show-and-hardware.txt",
        "dmesg-aer-correctable-uncorrectable_6.11.log",
        "dmesg-fallen-off-bus-three-lines_570.158.01.log",
        "dmesg-ctime_xid13-three-lines.log",
        "journalctl-k_ru-locale_xid79-aer.log",
        "table-rtx-2080-super_591.86_windows_powershell-utf16le.txt",
    ],
    [
        "seed-journalctl-aer.log",
        "seed-lscpu.txt",
        "seed-numactl.txt",
        "seed-iostat-xz.txt",
        "seed-mpstat.txt",
        "seed-sar-dev.txt",
        "seed-dmesg-T-xid31-bus.log",
    ],
]
SNAPSHOTS = [
    json.loads(dump_snapshot(load_evidence([FIXTURES / name for name in group])))
    for group in _GROUPS
]
VALUES: list[Any] = [
    0,
    -1,
    1,
    0.5,
    1e12,
    1e13,
    -1e13,
    2**63,
    2**64,
    18446744073709551615,
    5e-324,
    100,
    101,
    "",
    "x" * 600,
    "<script>",
    "²",
    None,
    True,
    False,
    [],
    {},
    [None],
    {"x": 1},
]


def _mutate_values(node: Any, rng: random.Random, rate: float) -> Any:
    if rng.random() < rate:
        return rng.choice(VALUES)
    if isinstance(node, dict):
        return {key: _mutate_values(value, rng, rate) for key, value in node.items()}
    if isinstance(node, list):
        items = [_mutate_values(value, rng, rate) for value in node]
        if items and rng.random() < rate:
            items += [items[0]] * rng.randint(1, 20)
        return items
    return node


@settings(
    max_examples=max(40, EXAMPLES // 5),
    deadline=timedelta(seconds=10),
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.integers(0, len(SNAPSHOTS) - 1), st.randoms(use_true_random=False))
def test_mutated_snapshots_through_the_reports(which: int, rng: random.Random) -> None:
    from .hostile_support import PROFILE

    text = json.dumps(_mutate_values(SNAPSHOTS[which], rng, rate=rng.choice([0.01, 0.03, 0.1])))
    with tempfile.TemporaryDirectory() as folder:
        profile = Path(folder, "profile.toml")
        profile.write_text(PROFILE, encoding="utf-8")
        evidence = Path(folder, "host.json")
        evidence.write_text(text, encoding="utf-8")
        _through_the_reports(profile, evidence, text)


def _through_the_reports(profile: Path, evidence: Path, text: str) -> None:
    from gpuadvisor.pipeline import advise
    from gpuadvisor.render.report import render

    try:
        decision = advise(profile, evidence=[evidence], sensitivity=False)
        for fmt in ("md", "html", "json"):
            render(decision, fmt).encode("utf-8")
    except InputError:
        return
    except Exception:
        keep_as_regression(text, suffix=".json")
        raise
