"""The compiled-template cache is used only in a private folder of the current user."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuadvisor.render.env import _bytecode_cache


def test_cache_in_a_private_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    assert _bytecode_cache() is not None
    folder = next((tmp_path / "gpuadvisor").iterdir())
    assert folder.stat().st_mode & 0o077 == 0


def test_no_cache_in_a_folder_others_can_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    assert _bytecode_cache() is not None
    folder = next((tmp_path / "gpuadvisor").iterdir())
    os.chmod(folder, 0o777)
    assert _bytecode_cache() is None


def test_no_cache_through_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    assert _bytecode_cache() is not None
    folder = next((tmp_path / "gpuadvisor").iterdir())
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    assert _bytecode_cache() is None


def test_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUADVISOR_NO_CACHE", "1")
    assert _bytecode_cache() is None


def test_a_cache_that_cannot_be_written_does_not_fail_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuadvisor.pipeline import advise
    from gpuadvisor.render.report import render

    from .conftest import REPO

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    cache = _bytecode_cache()
    assert cache is not None
    folder = next((tmp_path / "gpuadvisor").iterdir())
    monkeypatch.setattr("tempfile.NamedTemporaryFile", _refuse)
    decision = advise(REPO / "examples" / "llm-latency-endpoint.toml", sensitivity=False)
    assert render(decision, "md").startswith("# GPU purchase recommendation")
    assert list(folder.iterdir()) == []


def _refuse(*args: object, **kwargs: object) -> object:
    raise OSError(28, "No space left on device")
