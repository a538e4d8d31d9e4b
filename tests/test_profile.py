from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.profile import Profile, load_profile, parse_profile, profile_to_data

MINIMAL = """schema = "gpuadvisor/profile/v1"
[workload]
kind = "inference"
objective = "latency"
vram_need_gib = 40
"""


def test_minimal_profile_gets_documented_defaults() -> None:
    profile = parse_profile(MINIMAL)
    assert profile.workload.concurrent_jobs == 1
    assert profile.requirements.ecc == "no"
    assert profile.platform.chassis == "tower"
    assert profile.budget.max_usd == 10_000.0
    assert profile.team.multi_gpu_experience == "none"


def test_json_is_accepted_and_round_trips(tmp_path: Path) -> None:
    data = profile_to_data(parse_profile(MINIMAL))
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_profile(path) == parse_profile(MINIMAL)
    assert data["schema"] == "gpuadvisor/profile/v1"


def test_profile_is_frozen() -> None:
    profile = parse_profile(MINIMAL)
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises ValidationError
        profile.workload.vram_need_gib = 10  # type: ignore[misc]


@pytest.mark.parametrize(
    ("extra", "field", "line", "fragment", "hint"),
    [
        ("concurent_jobs = 2\n", "workload.concurent_jobs", 6, "unknown key", "concurrent_jobs"),
        ("[platfrom]\nchassis = 'tower'\n", "platfrom", None, "unknown key", "platform"),
        ("[platform]\nchassis = 'rack-3u'\n", "platform.chassis", 7, "rack-3u", None),
        ("[requirements]\necc = 'requird'\n", "requirements.ecc", 7, "requird", "required"),
        (
            "concurrent_jobs = 0\n",
            "workload.concurrent_jobs",
            6,
            "greater than or equal to 1",
            None,
        ),
        ("concurrent_jobs = 'two'\n", "workload.concurrent_jobs", 6, "integer", None),
        ("[budget]\nmax_usd = -5\n", "budget.max_usd", 7, "greater than 0", None),
        ("[budget]\nmax_usd = nan\n", "budget.max_usd", 7, "finite", None),
        ("[budget]\nmax_usd = inf\n", "budget.max_usd", 7, "finite", None),
    ],
)
def test_bad_fields_name_field_line_and_suggestion(
    extra: str, field: str, line: int | None, fragment: str, hint: str | None
) -> None:
    with pytest.raises(InputError) as caught:
        parse_profile(MINIMAL + extra, "p.toml")
    error = caught.value
    assert error.field == field
    assert error.file == "p.toml"
    if line is not None:
        assert error.line == line
    assert fragment in str(error)
    if hint:
        assert error.hint and hint in error.hint
    assert error.exit_code == 2


def test_missing_required_field() -> None:
    with pytest.raises(InputError) as caught:
        parse_profile(MINIMAL.replace("vram_need_gib = 40\n", ""))
    assert caught.value.field == "workload.vram_need_gib"
    assert "missing" in caught.value.message


def test_unknown_schema_version() -> None:
    with pytest.raises(InputError) as caught:
        parse_profile(MINIMAL.replace("profile/v1", "profile/v9"))
    assert caught.value.field == "schema"
    assert "unsupported schema" in caught.value.message


def test_toml_syntax_error_has_line() -> None:
    with pytest.raises(InputError) as caught:
        parse_profile(MINIMAL + "kind = \n", "p.toml")
    assert caught.value.line == 6
    assert "invalid TOML" in caught.value.message


def test_json_syntax_error_has_line() -> None:
    with pytest.raises(InputError) as caught:
        parse_profile('{\n "workload": {\n "kind": }\n}', "p.json")
    assert caught.value.line == 3


def test_json_nan_refused() -> None:
    with pytest.raises(InputError, match="NaN"):
        parse_profile(
            '{"workload": {"kind": "inference", "objective": "latency", "vram_need_gib": NaN}}'
        )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"\x00\x01\x02binary", "binary"),
        (b"\xff\xfe\x00t\x00e", "binary"),
        (b'title = "caf\xe9"', "UTF-8"),
    ],
)
def test_unreadable_content(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "p.toml"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        load_profile(path)


def test_directory_and_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="directory"):
        load_profile(tmp_path)
    with pytest.raises(InputError, match="not found"):
        load_profile(tmp_path / "nope.toml")


def test_every_contract_field_exists() -> None:
    """CONTRACT §1 names: never renamed."""
    expected = {
        "meta": {"title", "requester", "notes"},
        "workload": {
            "kind",
            "objective",
            "latency_slo_ms",
            "interactive",
            "vram_need_gib",
            "concurrent_jobs",
            "parallelism",
            "model_parallel_ready",
            "sync_heavy",
            "job_hours",
            "frame_pacing_critical",
            "io_pattern",
            "small_files",
        },
        "requirements": {
            "ecc",
            "silent_corruption_unacceptable",
            "certified_drivers",
            "isv_apps",
            "display_sync",
            "vgpu",
            "lifecycle_years",
            "fleet_homogeneity",
            "downtime_cost_per_hour_usd",
        },
        "platform": {
            "chassis",
            "airflow",
            "max_gpu_slot_width",
            "gpu_count_max",
            "psu_headroom_w",
            "cpu_sockets",
            "pcie_gen",
            "nvlink_possible",
        },
        "team": {"multi_gpu_experience"},
        "budget": {"max_usd", "electricity_usd_per_kwh"},
    }
    data = profile_to_data(parse_profile(MINIMAL))
    for section, names in expected.items():
        assert names <= set(data[section]), section
    assert set(Profile.model_json_schema(by_alias=True)["properties"]) >= {"schema", *expected}
