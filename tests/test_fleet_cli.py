"""``gpuadvisor fleet`` refuses bad input before it asks Prometheus anything: exit 2,
a message naming the option, the file and line or the field, never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import CliResult
from .fleet_support import write_profiles

#: Never contacted: every case below fails before the first query.
NOWHERE = "http://127.0.0.1:9"


@pytest.fixture()
def profiles(tmp_path: Path) -> Path:
    return write_profiles(tmp_path / "fleet")


def _run(cli: Callable[..., CliResult], *args: str) -> CliResult:
    result = cli("fleet", *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""
    return result


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--window", "7 days"], "--window: '7 days' is not a duration"),
        (["--window", "1m"], "the window must be between 10m and 400d"),
        (["--selector", "{cluster=a}"], "--selector: '{cluster=a}' is not a label selector"),
        (["--selector", '{__name__="up"}'], "the metric name is gpuadvisor's to choose"),
        (["--at", "yesterday"], "--at: 'yesterday' is not a time"),
        (["--format", "pdf"], "PDF output needs a file"),
    ],
)
def test_bad_options_are_named(
    cli: Callable[..., CliResult], profiles: Path, args: list[str], expected: str
) -> None:
    result = _run(cli, "--prometheus", NOWHERE, "--profiles", str(profiles), *args)
    assert expected in result.stderr


@pytest.mark.parametrize("url", ["ftp://prometheus:9090", "prometheus:9090", "http://"])
def test_a_url_that_is_not_http_is_refused(
    cli: Callable[..., CliResult], profiles: Path, url: str
) -> None:
    result = _run(cli, "--prometheus", url, "--profiles", str(profiles))
    assert "--prometheus" in result.stderr and "is not an http(s) URL" in result.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[groups]\nname = 'a'", "fleet.toml:1"),
        ("budget_usd = 1\n", "groups"),
        (
            "[[groups]]\nname = 'a'\nselector = '{}'\nprofile = 't4.toml'\nbudgett_usd = 5\n",
            "did you mean 'budget_usd'",
        ),
        (
            "[[groups]]\nname = 'a'\nselector = '{x=}'\nprofile = 't4.toml'\n",
            "fleet.toml:3: groups[0].selector",
        ),
        (
            "[[groups]]\nname = 'a'\nselector = '{}'\nprofile = 'nope.toml'\n",
            "fleet.toml:4: groups[0].profile: the profile 'nope.toml' of group 'a' does not exist",
        ),
        (
            "[[groups]]\nname = 'a'\nselector = '{}'\nprofile = 't4.toml'\n[[groups]]\nname = 'a'\nselector = '{}'\nprofile = 't4.toml'\n",
            "a appears twice",
        ),
        (
            "host_label = 'not a label'\n[[groups]]\nname = 'a'\nselector = '{}'\nprofile = 't4.toml'\n",
            "host_label",
        ),
        ("[[groups]]\nname = 'a'\nselector = '{}'\nprofile = 'bad.toml'\n", "bad.toml"),
    ],
)
def test_a_bad_profiles_file_is_named(
    cli: Callable[..., CliResult], profiles: Path, text: str, expected: str
) -> None:
    (profiles.parent / "bad.toml").write_text(
        'schema = "gpuadvisor/profile/v1"\n[workload]\nkind = "gaming"\n'
    )
    profiles.write_text(text)
    result = _run(cli, "--prometheus", NOWHERE, "--profiles", str(profiles))
    assert expected in result.stderr


def test_a_missing_profiles_file_is_named(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    result = _run(cli, "--prometheus", NOWHERE, "--profiles", str(tmp_path / "none.toml"))
    assert "none.toml" in result.stderr


def test_the_report_never_replaces_the_profiles_file(
    cli: Callable[..., CliResult], profiles: Path
) -> None:
    result = _run(cli, "--prometheus", NOWHERE, "--profiles", str(profiles), "-o", str(profiles))
    assert "would overwrite the input" in result.stderr


def test_the_fleet_report_has_a_json_schema(cli: Callable[..., CliResult]) -> None:
    import json

    result = cli("schema", "fleet")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["title"] == "FleetReport"
    assert {"groups", "totals", "hosts", "missing", "queries"} <= set(schema["properties"])
    assert schema["properties"]["schema"]["const"] == "gpuadvisor/fleet/v1"


def test_the_bundled_profiles_file_is_the_readmes_and_loads() -> None:
    """The README's fleet line names a bundled profiles file; it loads, every group's
    profile with it."""
    from gpuadvisor.fleet.profiles import load_profiles

    from .conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "--profiles examples/fleet/profiles.toml" in readme
    fleet = load_profiles(REPO / "examples" / "fleet" / "profiles.toml")
    assert [g.name for g in fleet.groups] == ["serving", "training"]
    assert fleet.budget_usd == 60000
    assert all(g.profile_path.is_file() for g in fleet.groups)
