"""The PromQL the fleet sends: durations, selectors, and the query table."""

from __future__ import annotations

import re

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.evidence.dcgm import METRICS
from gpuadvisor.fleet import promql, queries
from gpuadvisor.fleet.promql import Matcher, Selector, parse_selector, parse_window


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("7d", 604800),
        ("36h", 129600),
        ("1d12h", 129600),
        ("90m", 5400),
        ("2w", 1209600),
        ("1h30m15s", 5415),
    ],
)
def test_windows_read_as_prometheus_writes_them(text: str, seconds: int) -> None:
    assert parse_window(text) == seconds


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "not a duration"),
        ("7", "not a duration"),
        ("seven days", "not a duration"),
        ("12h1d", "not a duration"),  # largest unit first, as Prometheus requires
        ("-7d", "not a duration"),
        ("5m", "between 10m and 400d"),
        ("2y", "between 10m and 400d"),
    ],
)
def test_a_bad_window_is_named(text: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_window(text)
    assert problem in caught.value.message
    assert caught.value.field == "--window"


@pytest.mark.parametrize("seconds", [600, 3600, 5400, 86400, 90061, 604800, 31536000])
def test_durations_round_trip(seconds: int) -> None:
    assert parse_window(promql.duration(seconds)) == seconds


def test_selectors_parse_into_matchers_and_back() -> None:
    found = parse_selector(
        '{cluster="a", role=~"train|eval" , zone!="x\\"y", rack!~`r[0-9]+`}', field="s"
    )
    assert found.matchers == (
        Matcher("cluster", "=", "a"),
        Matcher("role", "=~", "train|eval"),
        Matcher("zone", "!=", 'x"y'),
        Matcher("rack", "!~", "r[0-9]+"),
    )
    assert parse_selector(found.text(), field="s") == found
    assert parse_selector("cluster='a'", field="s").matchers == (Matcher("cluster", "=", "a"),)
    assert parse_selector("{}", field="s") == Selector()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{cluster="a"', "does not close"),
        ("{cluster}", "operator"),
        ("{cluster=a}", "quoted value"),
        ('{cluster="a" role="b"}', "','"),
        ('{__name__="up"}', "metric name"),
        ('{role=~"(unclosed"}', "not a regular expression"),
        ('{1abc="x"}', "label name"),
        ('{a="unterminated}', "not closed"),
    ],
)
def test_a_bad_selector_is_named(text: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_selector(text, field="--selector")
    assert problem in caught.value.message
    assert caught.value.field == "--selector"


def test_every_dcgm_field_the_parser_knows_is_aggregated_over_the_window() -> None:
    """One mapping of DCGM fields to host/v1 (the dcgm-exporter parser's); the fleet adds
    only how each is aggregated, for every one of them."""
    assert set(queries.AGGREGATION) == set(METRICS)


def test_queries_are_window_aggregates_over_the_selector() -> None:
    selector = parse_selector('{cluster="a"}', field="s")
    plan = queries.plan(selector, 7 * 86400, "instance", "instance")
    names = [q.name for q in plan.queries]
    assert len(names) == len(set(names))
    for query in plan.queries:
        assert 'cluster="a"' in query.expr, query.expr
        if query.role != "node":
            assert 'GPU_I_ID=""' in query.expr  # MIG instances are not physical GPUs
        if query.kind == "instant":
            assert re.search(r"\[7d(:\w+)?\]", query.expr), query.expr
            assert "[7d" in query.name or "7d" in query.name
    series = [q for q in plan.queries if q.kind == "range"]
    assert {q.target for q in series} == {"util_pct", "sm_clock_mhz", "temp_c", "power_w"}
    assert plan.step_s == 7 * 86400 // queries.SUBWINDOWS
    assert "avg_over_time(DCGM_FI_DEV_GPU_UTIL[7d])" in names


def test_identity_query_adds_the_group_selector() -> None:
    everyone = parse_selector('{cluster="a"}', field="s")
    group = parse_selector('{role="train"}', field="s")
    query = queries.identity_query(everyone.and_(group), 3600, "instance")
    assert query.expr.count('cluster="a", role="train", GPU_I_ID=""') == len(
        queries.IDENTITY_METRICS
    )


def test_share_queries_name_exactly_the_flagged_hosts() -> None:
    hosts = ["10.0.0.1:9400", "gpu-[7]:9400", "a|b"] + [
        f"n{i}" for i in range(queries.HOSTS_PER_QUERY)
    ]
    found = queries.reason_queries(
        Selector(), 3600, "instance", {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": hosts}
    )
    batches = {q.expr.split('instance=~"')[1].split('"}')[0] for q in found}
    assert len(batches) == 2 and len(found) == 2 * len(queries.REASONS)
    assert all(q.sparse and q.role == "reason" for q in found)
    patterns = [re.compile(json_unquote(b)) for b in sorted(batches)]
    for host in hosts:
        assert sum(bool(p.fullmatch(host)) for p in patterns) == 1, host
    assert not any(p.fullmatch("10.0.0.19400") or p.fullmatch("a") for p in patterns)


def json_unquote(text: str) -> str:
    import json

    return str(json.loads(f'"{text}"'))
