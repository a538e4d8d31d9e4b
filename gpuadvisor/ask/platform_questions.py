"""The questions about ``[platform]``: the box the cards go into, then the optional
hardware details few buyers can answer (the power supply's rating or the power left
for the GPUs, slot positions, wall circuit, CPU sockets, what the host draws itself, PCIe
generation), "don't know" by default and asked only of the boxes they mean something
for. Spliced into ``QUESTIONS`` after the requirements; :data:`HOSTS_QUESTION` (how many
identical machines) is asked with the jobs, before the count of jobs."""

from __future__ import annotations

import re
from typing import Final

from gpuadvisor.ask.fields import Answers
from gpuadvisor.ask.question import HARDWARE, Question
from gpuadvisor.ask.units import DONT_KNOW

RACK_CHASSIS: Final = ("rack-1u", "rack-2u", "rack-4u")
#: Machines that stand under a desk and plug into a wall socket.
DESK_CHASSIS: Final = ("tower", "workstation")
#: The platform details that mean something only once the chassis is known.
CHASSIS: Final = ("platform.chassis",)


def _multi_gpu(a: Answers) -> bool:
    return a["workload.parallelism"] != "none" or bool(a["workload.model_parallel_ready"])


def _no_supply_rating(a: Answers) -> bool:
    """The power left for the GPUs is asked only where the supply's rating is not given
    (a profile states one of the two)."""
    return not a["platform.psu_w"]


def _host_draw_counts(a: Answers) -> bool:
    """What the processors and the rest of the host draw counts only against a supply's
    rating or a wall circuit (the power left for the GPUs has it taken off already)."""
    return bool(a["platform.psu_w"]) or bool(a["platform.circuit_w"])


def _detail(field: str, prompt: str, why: str, **more: object) -> Question:
    """An optional hardware detail: "don't know" is its default, the chassis first."""
    return Question(
        field,
        prompt,
        why,
        depends_on=CHASSIS,
        unknown_answer=DONT_KNOW,
        group=HARDWARE,
        **more,  # type: ignore[arg-type]
    )


PLATFORM_QUESTIONS: Final[tuple[Question, ...]] = (
    Question(
        "platform.chassis",
        "What kind of computer or server will the cards go into?",
        "Size, cooling and power of the box limit which cards fit; if it is not decided "
        "yet, answer unknown: the profile then says it is not known, and the report that "
        "the usual tower values were assumed.",
        choices=(
            ("tower", "an office-style PC case"),
            ("workstation", "a professional deskside workstation"),
            ("rack-1u", "a flat 1U rack server"),
            ("rack-2u", "a 2U rack server"),
            ("rack-4u", "a tall 4U rack server"),
        ),
        unknown_answer="unknown",
    ),
    Question(
        "platform.airflow",
        "How does air move through that box?",
        "Some cards need server airflow, others a roomy case; if unsure, keep the suggestion.",
        depends_on=CHASSIS,
        choices=(
            ("open", "a roomy case with fans; air moves freely"),
            ("front-to-back", "server airflow: cool air in at the front, out at the back"),
            ("restricted", "cramped, dusty or hot; little fresh air"),
        ),
        suggest=lambda a: "front-to-back" if a["platform.chassis"] in RACK_CHASSIS else None,
    ),
    Question(
        "platform.max_gpu_slot_width",
        "How many slots wide may one card be (a 'dual-slot' card is 2)?",
        "A card thicker than the space available does not fit; if unsure, ask IT or the "
        "vendor of the box.",
        depends_on=CHASSIS,
        units=("slots", "slot"),
    ),
    Question(
        "platform.gpu_count_max",
        "How many GPU cards can that box take at most?",
        "Buying more cards than fit is wasted money; if unsure, ask IT or the vendor of the box.",
        depends_on=CHASSIS,
        units=("cards", "card", "gpus", "gpu"),
    ),
    Question(
        "platform.power_limit_ok",
        "May the cards be power-limited (a few per cent slower) to fit the power or the heat?",
        "Limiting cards to 80-90 % of their rated power costs little speed and can let more "
        "cards fit; if unsure, answer no.",
        depends_on=CHASSIS,
    ),
    Question(
        "platform.nvlink_possible",
        "Can that box take an NVLink bridge between two cards?",
        "A bridge speeds up jobs spread over several cards; if unsure, answer no.",
        when=_multi_gpu,
        depends_on=CHASSIS,
    ),
    _detail(
        "platform.psu_w",
        "What is the power supply of that box rated for, in watts?",
        "Cards that draw more than the power supply can give crash or do not start; "
        "gpuadvisor takes the processors' and the rest of the machine's draw off the "
        "rating; if unsure, answer don't know.",
        units=("watts", "watt", "w"),
        aside=lambda a: (
            "The figure on its label or data sheet. If you know instead how "
            "many watts are left over for the GPUs, answer don't know: that is the next question."
        ),
        replaces=(("platform.psu_headroom_w", "the power left over for the GPUs"),),
    ),
    _detail(
        "platform.psu_headroom_w",
        "How many watts of power are left over for the GPUs in that box?",
        "Cards that draw more than the power supply can give crash or do not start; the "
        "vendor of the box or IT knows; if unsure, answer don't know (800 W is assumed).",
        when=_no_supply_rating,
        units=("watts", "watt", "w"),
    ),
    _detail(
        "platform.gpu_slots_total",
        "How many slot positions can the GPUs take up together (a dual-slot card takes 2)?",
        "Wide cards add up: four triple-slot cards need 12 positions; if unsure, answer "
        "don't know and the usual spacing for that box is assumed.",
        when=lambda a: int(a["platform.gpu_count_max"]) > 1,
        units=("slots", "slot"),
    ),
    _detail(
        "platform.circuit_w",
        "What is the wall circuit the machine plugs into rated for, in watts?",
        "A normal 15 A / 120 V office circuit (1,800 W) caps a workstation before its power "
        "supply does; if unsure, answer don't know and no circuit limit is applied.",
        when=lambda a: a["platform.chassis"] in DESK_CHASSIS,
        units=("watts", "watt", "w"),
    ),
    _detail(
        "platform.cpu_sockets",
        "How many CPU sockets (processors) does that machine have?",
        "With two, cards attached to different processors talk to each other slowly; if "
        "unsure, answer don't know (one socket is assumed).",
        when=lambda a: a["platform.chassis"] != "tower",
    ),
    _detail(
        "platform.cpu_w",
        "How many watts do the processors draw under load, all of them together (their "
        "rated TDP is a fair figure)?",
        "They share the power supply and the wall circuit with the cards; if unsure, "
        "answer don't know (a usual figure per processor is assumed, and the report says "
        "so).",
        when=_host_draw_counts,
        units=("watts", "watt", "w"),
    ),
    _detail(
        "platform.system_w",
        "How many watts does the rest of the machine draw (board, memory, drives, fans)?",
        "It shares the power supply and the wall circuit with the cards too; if unsure, "
        "answer don't know (a usual figure is assumed, and the report says so).",
        when=_host_draw_counts,
        units=("watts", "watt", "w"),
    ),
    _detail(
        "platform.pcie_gen",
        "Which PCIe generation are the card slots (3, 4 or 5)?",
        "Older slots slow down moving data to the card; if unsure, answer don't know "
        "(generation 4, most machines built since 2020, is assumed).",
        convert=lambda text: re.sub(r"^(pcie|pci-e|gen)\s*", "", text.strip().lower()),
    ),
)

#: How many identical machines the purchase equips: asked just before the jobs, which it
#: changes (they are counted over all of them).
HOSTS_QUESTION: Final = Question(
    "platform.hosts",
    "How many identical workstations or servers does this purchase equip, each with its own cards?",
    "Five CAD seats are five workstations of one card each, not five jobs in one box; "
    "the prices, the budget check and the capacity then count all of them; if unsure, "
    "answer 1.",
    units=("machines", "machine", "workstations", "workstation", "servers", "server", "hosts"),
    check=lambda hosts, a: (
        f"that is more machines than the {a['workload.concurrent_jobs']} jobs wanted at "
        "the same time (counted over all machines): change that answer first, or answer "
        "fewer machines"
        if a.known("workload.concurrent_jobs") and hosts > a["workload.concurrent_jobs"]
        else None
    ),
)


def hosts_aside(a: Answers) -> str | None:
    """What the jobs question adds once the purchase equips several machines."""
    hosts = a["platform.hosts"]
    if hosts <= 1:
        return None
    return f"Count them over all {hosts} machines together: one seat in each of {hosts} is {hosts}."


def jobs_check(jobs: int, a: Answers) -> str | None:
    """Fewer jobs than machines: the jobs were probably counted per machine."""
    hosts = a["platform.hosts"]
    if jobs >= hosts:
        return None
    return (
        f"fewer jobs than the {hosts} machines this purchase equips: count the jobs, seats "
        f"or users over all machines together ({hosts} or more)"
    )
