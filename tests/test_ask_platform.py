"""The questions of issue #30's profile fields: how many identical machines the purchase
equips (asked with the jobs, which are then counted over all of them), the power
supply's rating as the alternative to the power left for the GPUs (the profile written
holds one of the two), what the host draws itself, a software vendor's minimum card, and
a training method not decided yet. The command line and the web page ask them through
the same data and read their answers through the same code.
"""

from __future__ import annotations

import pytest

from gpuadvisor.ask import QUESTIONS, UNSTATED, Answers, profile_document, run_interview
from gpuadvisor.ask.flow import read_answer, refusal
from gpuadvisor.ask.progress import section_of
from gpuadvisor.inputs.profile import parse_profile

from .test_ask import MINIMAL, ScriptedDialogue

BY_FIELD = {q.field: q for q in QUESTIONS}
FIELDS = [q.field for q in QUESTIONS]
WORKSTATION = {**MINIMAL, "workload.vram_need_gib": "8", "platform.chassis": "workstation"}


def asked(
    answers: dict[str, str | list[str]], start: dict[str, object] | None = None
) -> ScriptedDialogue:
    dialogue = ScriptedDialogue(answers)
    dialogue.interview = run_interview(  # type: ignore[attr-defined]
        dialogue, start=start, start_name="start.toml"
    )
    return dialogue


def written(flow: ScriptedDialogue) -> str:
    interview = flow.interview  # type: ignore[attr-defined]
    return profile_document(interview.profile, interview.unknown)


def refused(field: str, text: str, stated: dict[str, object]) -> str:
    question = BY_FIELD[field]
    with pytest.raises(ValueError) as caught:
        read_answer(question, Answers(stated), text)
    return refusal(question, caught.value)


# -- how many identical machines ----------------------------------------------------------


def test_the_machines_are_asked_just_before_the_jobs_in_the_workload_section() -> None:
    hosts = FIELDS.index("platform.hosts")
    assert FIELDS[hosts + 1] == "workload.concurrent_jobs"
    assert section_of(BY_FIELD["platform.hosts"]) == "workload"
    flow = asked({**MINIMAL, "workload.vram_need_gib": "8"})
    assert flow.asked.index("platform.hosts") + 1 == flow.asked.index("workload.concurrent_jobs")


def test_five_seats_are_counted_over_all_machines() -> None:
    flow = asked({**WORKSTATION, "platform.hosts": "5 workstations"})
    at = flow.said.index(BY_FIELD["workload.concurrent_jobs"].prompt)
    assert (
        flow.said[at + 1]
        == "  Count them over all 5 machines together: one seat in each of 5 is 5."
    )
    assert "  Default: 5" in flow.said[at:]  # Enter: one job in each machine
    profile = flow.interview.profile  # type: ignore[attr-defined]
    assert (profile.platform.hosts, profile.workload.concurrent_jobs) == (5, 5)
    assert parse_profile(written(flow)) == profile
    one = asked(WORKSTATION)  # one machine: the jobs question says nothing more
    at = one.said.index(BY_FIELD["workload.concurrent_jobs"].prompt)
    assert one.said[at + 1].startswith("  Why: ")
    assert one.interview.profile.platform.hosts == 1  # type: ignore[attr-defined]


def test_fewer_jobs_than_machines_are_refused_at_the_jobs_question() -> None:
    flow = asked({**WORKSTATION, "platform.hosts": "5", "workload.concurrent_jobs": ["1", "5"]})
    said = [line for line in flow.said if line.startswith("  Not accepted:")]
    assert said == [
        "  Not accepted: fewer jobs than the 5 machines this purchase equips: count the "
        "jobs, seats or users over all machines together (5 or more), or don't know. "
        "Please answer again."
    ]
    assert flow.interview.profile.workload.concurrent_jobs == 5  # type: ignore[attr-defined]


def test_more_machines_than_jobs_already_answered_are_refused() -> None:
    """Changing the machines after the jobs (the web page's Change) says what to do."""
    message = refused("platform.hosts", "4", {"workload.concurrent_jobs": 2})
    assert message.startswith(
        "Not accepted: that is more machines than the 2 jobs wanted at the same time"
    )
    value, _ = read_answer(BY_FIELD["platform.hosts"], Answers({}), "4")
    assert value == 4  # before the jobs are answered, any count stands


# -- the supply's rating or the power left for the GPUs ------------------------------------


def test_a_supply_rating_stands_in_for_the_power_left_for_the_gpus() -> None:
    flow = asked({**WORKSTATION, "platform.psu_w": "1000 W", "platform.circuit_w": "1800"})
    assert "platform.psu_headroom_w" not in flow.asked
    assert {"platform.cpu_w", "platform.system_w"} <= set(flow.asked)
    text = written(flow)
    assert "\npsu_w = 1000.0  #" in text
    assert "\n# psu_headroom_w = 800.0  # (not stated: psu_w stands in for it)" in text
    loaded = parse_profile(text)  # advise refuses a profile that states both
    assert (
        loaded.platform.psu_w == 1000 and "psu_headroom_w" not in loaded.platform.model_fields_set
    )


def test_a_supply_rating_not_known_asks_the_power_left_for_the_gpus() -> None:
    flow = asked({**WORKSTATION, "platform.psu_w": "don't know", "platform.psu_headroom_w": "600"})
    assert flow.asked.index("platform.psu_w") + 1 == flow.asked.index("platform.psu_headroom_w")
    at = flow.said.index(BY_FIELD["platform.psu_w"].prompt)
    assert flow.said[at + 1] == (
        "  The figure on its label or data sheet. If you know instead how many watts are "
        "left over for the GPUs, answer don't know: that is the next question."
    )
    # The power left has the host's draw taken off already: not asked, and no circuit.
    assert not {"platform.cpu_w", "platform.system_w"} & set(flow.asked)
    text = written(flow)
    assert "\n# psu_w = 0.0  # (not known yet" in text and "\npsu_headroom_w = 600.0  #" in text
    assert parse_profile(text).platform.psu_headroom_w == 600


def test_a_rating_given_over_a_starting_profiles_power_left_says_it_is_left_out() -> None:
    start = {"platform": {"chassis": "workstation", "psu_headroom_w": 500}}
    flow = asked({**WORKSTATION, "platform.psu_w": "1200"}, start=start)
    assert (
        "  Left out the earlier answer for the power left over for the GPUs (500): this "
        "answer stands in for it."
    ) in flow.said
    profile = flow.interview.profile  # type: ignore[attr-defined]
    assert profile.platform.psu_w == 1200
    assert "psu_headroom_w" not in profile.platform.model_fields_set
    assert parse_profile(written(flow)) == profile


def test_what_the_host_draws_is_asked_with_a_wall_circuit_and_taken_in_watts() -> None:
    flow = asked(
        {
            **WORKSTATION,
            "platform.circuit_w": "1800",
            "platform.cpu_w": "280 W",
            "platform.system_w": "don't know",
        }
    )
    profile = flow.interview.profile  # type: ignore[attr-defined]
    assert (profile.platform.cpu_w, profile.platform.system_w) == (280.0, None)
    assert "platform.system_w" in flow.interview.unknown  # type: ignore[attr-defined]
    assert "\n# system_w =  # What the rest" in written(flow)  # unset: the policy's figure


# -- a software vendor's minimum card -----------------------------------------------------


def test_a_vendors_minimum_card_is_asked_of_cad_work_in_gb() -> None:
    cad = {
        "workload.kind": "cad-cae",
        "workload.objective": "correctness",
        "workload.vram_need_gib": "12",
        "requirements.min_card_memory_gb": "24 GB",
    }
    flow = asked(cad)
    assert "requirements.min_card_memory_gb" in flow.asked
    assert flow.interview.profile.requirements.min_card_memory_gb == 24.0  # type: ignore[attr-defined]
    none = asked({**cad, "requirements.min_card_memory_gb": "none"})
    assert none.interview.profile.requirements.min_card_memory_gb is None  # type: ignore[attr-defined]
    assert "requirements.min_card_memory_gb" not in asked(WORKSTATION).asked  # training


def test_a_vendors_minimum_left_unknown_is_no_minimum() -> None:
    value, _ = read_answer(BY_FIELD["requirements.min_card_memory_gb"], Answers({}), "unsure")
    assert value is UNSTATED
