"""The fleet's judgements (gpuadvisor/fleet/data/judgement.toml): every example in the
file holds, and the arithmetic reads the file's numbers."""

from __future__ import annotations

import pytest

from gpuadvisor.fleet.judgement import IdleExample, StatusExample, judgement

JUDGEMENT = judgement()


@pytest.mark.parametrize("example", JUDGEMENT.idle.examples, ids=lambda e: e.name)
def test_idle_examples(example: IdleExample) -> None:
    idle = JUDGEMENT.gpu_idle(example.util_mean_pct, example.memory_used_pct)
    assert ("idle" if idle else "in-use") == example.expect


@pytest.mark.parametrize("example", JUDGEMENT.status.examples, ids=lambda e: e.name)
def test_status_examples(example: StatusExample) -> None:
    status = JUDGEMENT.host_status(tuple(example.fix_first_categories), example.all_gpus_idle)
    assert status == example.expect


def test_the_thresholds_are_the_files() -> None:
    limit = JUDGEMENT.idle.max_util_mean_pct
    assert JUDGEMENT.gpu_idle(limit, 0.0)
    assert not JUDGEMENT.gpu_idle(limit + 0.01, 0.0)
    assert not JUDGEMENT.gpu_idle(0.0, JUDGEMENT.idle.max_memory_used_pct + 0.01)
