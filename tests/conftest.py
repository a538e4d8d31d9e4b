"""Shared fixtures: the small test catalog, the bundled rules, a CLI runner."""

from __future__ import annotations

import datetime as dt
import io
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuadvisor.cli import main
from gpuadvisor.engine.rules import RuleBase, load_rules
from gpuadvisor.inputs.catalog import Catalog, load_catalog
from tests.fleet_support import FleetData

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
REPO = TESTS.parent
SHARED = REPO.parent / "shared"
REAL_FIXTURES = SHARED / "fixtures" / "real"

#: Every decision made under test is dated 2026-12-01 (``provenance.generated_at``), so
#: golden reports do not change with the day they are made. Tests of the date itself
#: change or remove the variable with ``monkeypatch``.
TEST_SOURCE_DATE_EPOCH = "1796083200"
TEST_DATE = "2026-12-01"


def pytest_configure(config: pytest.Config) -> None:
    os.environ["SOURCE_DATE_EPOCH"] = TEST_SOURCE_DATE_EPOCH


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite golden files from the current output (review the diff!)",
    )


#: The decision date every test decision is made on (prices' ages count to it): the day
#: TEST_SOURCE_DATE_EPOCH names.
DECISION_DATE = dt.date(2026, 12, 1)


@pytest.fixture(scope="session")
def test_catalog() -> Catalog:
    return load_catalog(base=FIXTURES / "catalog")


@pytest.fixture(scope="session")
def rulebase() -> RuleBase:
    return load_rules()


@pytest.fixture(scope="session")
def fleet_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FleetData]:
    """A real Prometheus (Debian's) on 127.0.0.1, filled with the test fleet's recorded
    dcgm-exporter and node-exporter series; started once for the whole run."""
    from tests import fleet_support

    missing = fleet_support.tools_missing()
    if missing:
        pytest.skip(missing)
    if fleet_support.real_fixtures() is None:
        pytest.skip("../shared/fixtures/real not found: the fleet is made from its T4 scrape")
    yield from fleet_support.running_fleet(tmp_path_factory.mktemp("prometheus"))


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture()
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """Run ``gpuadvisor ARGS`` in process through the real entry point."""

    def run(*args: str, stdin: str = "") -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = 0
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return CliResult(code, out.getvalue(), err.getvalue())

    return run
