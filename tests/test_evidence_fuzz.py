"""Whatever text arrives, the evidence layer answers with a snapshot or an InputError,
never another exception (the CLI turns only InputError into a clean exit 2)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.errors import InputError
from gpuadvisor.evidence import parse_text
from gpuadvisor.hostfacts import derive_host_facts

from .evidence_support import FIXTURES

LINES = sorted({line for path in FIXTURES.iterdir() for line in path.read_text().splitlines()})


def _survives(text: str) -> None:
    try:
        snapshot = parse_text(text, "fuzz.txt")
    except InputError:
        return
    derive_host_facts(snapshot)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=40))
def test_shuffled_real_lines(lines: list[str]) -> None:
    _survives("\n".join(lines) + "\n")


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("GPU0123456789:. |-+x#%=\n\tabcNVXidAER[]()")), max_size=400
    )
)
def test_random_text(text: str) -> None:
    _survives(text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(FIXTURES.iterdir())), st.data())
def test_truncated_fixtures(path: Path, data: st.DataObject) -> None:
    text = path.read_text()
    cut = data.draw(st.integers(min_value=1, max_value=max(1, len(text))))
    _survives(text[:cut])
