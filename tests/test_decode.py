"""Video analytics (issue #30 §2, ``workload.decode_streams``): the streams a host
decodes against its cards' NVDEC engines set a lower bound on the cards it needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuadvisor.decision.model import Decision
from gpuadvisor.engine.decode import streams_per_engine
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.policy import bundled_policy
from gpuadvisor.pipeline import advise

EXAMPLE = Path(__file__).parent.parent / "examples" / "edge-video-analytics.toml"
POLICY = bundled_policy().decode


@pytest.mark.parametrize("example", POLICY.examples, ids=lambda e: e.name)
def test_decode_policy_examples(example: object) -> None:
    from gpuadvisor.engine.decode import DecodeExample

    assert isinstance(example, DecodeExample)
    got = streams_per_engine(POLICY, example.codec, example.resolution)
    assert got == example.streams_per_engine


def _advise(tmp_path: Path, streams: str) -> Decision:
    text = EXAMPLE.read_text(encoding="utf-8")
    line = 'decode_streams = { count = 96, codec = "h264", resolution = "1080p30" }'
    assert line in text
    path = tmp_path / "profile.toml"
    path.write_text(text.replace(line, streams), encoding="utf-8")
    return advise(path, sensitivity=False)


def test_the_edge_box_takes_two_l4_for_96_streams() -> None:
    decision = advise(EXAMPLE, sensitivity=False)
    top = decision.picks[0]
    assert (top.name, top.count) == ("NVIDIA L4", 2)
    assert top.board_power_w == 144  # two slot-powered 72 W cards in the 150 W left
    assert decision.recommendation.capacity is not None
    assert decision.recommendation.capacity.summary == (
        "2 cards, needed to decode 96 streams, serve 1 of 1 job; 96 H.264 1080p30 streams "
        "need 2 NVIDIA L4 cards "
        "(4 decoders each, 80 streams per card)."
    )
    finding = next(f for f in decision.findings if f.rule == "DEC-001")
    assert "Each host decodes 96 H.264 streams of 1080p30" in " ".join(finding.rationale.split())
    assert decision.recommendation.headline.startswith(
        "Buy 2 × NVIDIA L4, the video streams spread over their decoders (24 GiB each,"
    )  # not "one job per card": there is one job
    # The second card decodes: no finding says it would sit idle.
    assert not any(f.rule == "JOBS-002" for f in decision.findings)
    # Cards whose engines no cited page states are rejected, not assumed.
    assert not any(p.name in ("NVIDIA A2", "NVIDIA A10") for p in decision.picks)


def test_fewer_streams_need_one_card(tmp_path: Path) -> None:
    decision = _advise(
        tmp_path, 'decode_streams = { count = 48, codec = "h264", resolution = "1080p30" }'
    )
    top = decision.picks[0]
    assert (top.name, top.count) == ("NVIDIA L4", 1)
    assert decision.recommendation.capacity is not None
    assert decision.recommendation.capacity.summary == (
        "1 card serves 1 of 1 job; 48 H.264 1080p30 streams need 1 NVIDIA L4 card "
        "(4 decoders each, 80 streams per card)."
    )
    # One card decodes them all: a second one would be idle, as JOBS-002 says.
    assert any(f.rule == "JOBS-002" for f in decision.findings)


def test_too_many_streams_for_the_box_leave_no_pick(tmp_path: Path) -> None:
    # 200 streams need 3 L4 (80 each); the box holds 2 cards: nothing fits.
    decision = _advise(
        tmp_path, 'decode_streams = { count = 200, codec = "h264", resolution = "1080p30" }'
    )
    assert not any(p.name == "NVIDIA L4" for p in decision.picks)


def test_without_streams_one_card_does(tmp_path: Path) -> None:
    decision = _advise(tmp_path, "")
    assert decision.picks[0].count == 1
    assert not any(f.rule == "DEC-001" for f in decision.findings)


def test_a_bad_resolution_is_named_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    text = EXAMPLE.read_text(encoding="utf-8").replace('"1080p30"', '"1080i"')
    path.write_text(text, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "advise", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2
    assert "workload.decode_streams.resolution" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_profile_schema_has_decode_streams() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "schema", "profile"],
        capture_output=True,
        text=True,
        check=True,
    )
    schema = json.loads(run.stdout)
    text = json.dumps(schema)
    assert "decode_streams" in text
    assert '"h264"' in text and '"av1"' in text


def test_hevc_is_written_in_the_buyers_words(tmp_path: Path) -> None:
    decision = _advise(
        tmp_path, 'decode_streams = { count = 96, codec = "hevc", resolution = "4k30" }'
    )
    finding = next(f for f in decision.findings if f.rule == "DEC-001")
    assert "Each host decodes 96 H.265 (HEVC) streams of 4k30" in " ".join(
        finding.rationale.split()
    )


def test_the_cards_the_streams_need_are_the_fewest_of_any_card_that_fits_the_slots() -> None:
    from gpuadvisor.engine.decode import derived
    from gpuadvisor.inputs.catalog import load_catalog

    skus = load_catalog().skus
    streams: dict[str, Value] = {
        "workload.decode_stream_count": 96,
        "workload.decode_codec": "h264",
        "workload.decode_resolution": "1080p30",
    }
    one_slot = derived(streams, POLICY, 1, skus, 1)
    assert one_slot["workload.cards_needed_for_io"] == 2  # the L4's 80 streams are the most
    assert one_slot["workload.decode_codec_name"] == "H.264"
    # A wider card with more decoders (an A100's 5, an H100's 7) takes them alone.
    assert derived(streams, POLICY, 1, skus, None)["workload.cards_needed_for_io"] == 1
    assert derived({}, POLICY, 1, skus, 1)["workload.cards_needed_for_io"] == 0


def test_one_engine_works_the_decode_facts_out_again_for_other_streams() -> None:
    # The engine caches derived facts by the values they read: the streams are among them.
    from gpuadvisor.engine.core import Engine
    from gpuadvisor.engine.facts import build_facts
    from gpuadvisor.engine.rules import load_rules
    from gpuadvisor.inputs.catalog import load_catalog
    from gpuadvisor.inputs.profile import load_profile

    engine = Engine(load_catalog(), load_rules())
    values = build_facts(load_profile(EXAMPLE), engine.catalog).values
    first = engine.prepare(values)
    fewer = engine.prepare({**values, "workload.decode_stream_count": 8})
    assert first["workload.decode_streams_per_host"] == 96
    assert fewer["workload.decode_streams_per_host"] == 8
    assert (first["workload.cards_needed_for_io"], fewer["workload.cards_needed_for_io"]) == (2, 1)
