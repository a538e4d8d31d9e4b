"""The report date, ``provenance.generated_at`` (CONTRACT §6): from SOURCE_DATE_EPOCH
when it is set, else today's date; always in the decision, and what every format shows."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from gpuadvisor.decision.dates import report_date
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.catalog import Catalog
from gpuadvisor.pipeline import advise
from gpuadvisor.render.report import render

from .conftest import REPO, TEST_DATE, TEST_SOURCE_DATE_EPOCH

PROFILE = REPO / "examples" / "llm-latency-endpoint.toml"


def fixed_today() -> dt.date:
    return dt.date(2031, 7, 4)


def test_source_date_epoch_gives_the_utc_day() -> None:
    assert report_date({"SOURCE_DATE_EPOCH": "1767225600"}) == "2026-01-01"
    assert report_date({"SOURCE_DATE_EPOCH": "1767225599"}) == "2025-12-31"
    assert report_date({"SOURCE_DATE_EPOCH": " 0 "}) == "1970-01-01"


@pytest.mark.parametrize("environ", [{}, {"SOURCE_DATE_EPOCH": ""}, {"SOURCE_DATE_EPOCH": " "}])
def test_without_source_date_epoch_the_date_is_today(environ: dict[str, str]) -> None:
    assert report_date(environ, today=fixed_today) == "2031-07-04"


@pytest.mark.parametrize(
    "epoch", ["yesterday", "1e9", "1_767_225_600", "\u0661\u0662\u0663", "9" * 40, "1.5"]
)
def test_a_source_date_epoch_that_is_not_a_day_is_refused(epoch: str) -> None:
    with pytest.raises(InputError, match="SOURCE_DATE_EPOCH"):
        report_date({"SOURCE_DATE_EPOCH": epoch})


def test_the_decision_always_carries_its_date(
    test_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert report_date({"SOURCE_DATE_EPOCH": TEST_SOURCE_DATE_EPOCH}) == TEST_DATE
    dated = advise(PROFILE, catalog=test_catalog, sensitivity=False)
    assert json.loads(render(dated, "json"))["provenance"]["generated_at"] == TEST_DATE

    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    before = dt.date.today().isoformat()
    undated = advise(PROFILE, catalog=test_catalog, sensitivity=False)
    after = dt.date.today().isoformat()
    generated = json.loads(render(undated, "json"))["provenance"]["generated_at"]
    assert generated in {before, after}
    assert f"Date: {generated}" in render(undated, "md")
