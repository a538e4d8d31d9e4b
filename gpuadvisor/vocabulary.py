"""The one vocabulary every layer speaks: purchase shapes, GPU classes, rule categories
and severities, profile choices, catalog enumerations, and how a value reads in text.

Each closed set is a ``Literal`` (what pydantic and mypy check) and a tuple of its values
in the order reports list them (what loops, the CLI's choices and the fact schema read).
A value is added here once and is then known everywhere; names are never renamed
(CONTRACT). Nothing here imports the rest of gpuadvisor.
"""

from __future__ import annotations

from typing import Literal, get_args

# -- the decision ---------------------------------------------------------------------

Shape = Literal[
    "single-larger-gpu",
    "two-independent-jobs",
    "multi-gpu-model-parallel",
    "multi-gpu-data-parallel",
]
#: Every shape of the contract (CONTRACT §4 and §6), simplest first: the tie-break order.
SHAPES: tuple[Shape, ...] = get_args(Shape)

#: GPU classes, which are the catalog's market segments: one word, one meaning.
GpuClass = Literal["consumer", "professional", "datacenter"]
CLASSES: tuple[GpuClass, ...] = get_args(GpuClass)
Segment = GpuClass
SEGMENTS: tuple[Segment, ...] = CLASSES

Category = Literal[
    "vram",
    "sync",
    "topology",
    "p2p",
    "pcie",
    "numa",
    "cpu",
    "io",
    "thermal",
    "power",
    "health",
    "latency",
    "frame-pacing",
    "reliability",
    "ecc",
    "certification",
    "display-sync",
    "virtualization",
    "lifecycle",
    "airflow",
    "cost",
    "team",
    "driver",
    "config",
]
#: The contract's fixed vocabulary of rule categories (CONTRACT §4), in its order.
CATEGORIES: tuple[Category, ...] = get_args(Category)

Severity = Literal["info", "advice", "warning", "blocker"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
#: Most severe first, as reports sort findings.
SEVERITY_ORDER: dict[str, int] = {"blocker": 0, "warning": 1, "advice": 2, "info": 3}

#: The kinds of rule, as ``rules list`` shows them; each is also the rules folder that
#: holds it (see ``RULE_FOLDERS``).
RuleKind = Literal["preference", "constraint", "fix-first"]
RULE_KINDS: tuple[RuleKind, ...] = get_args(RuleKind)
#: The rules folder of each kind: the kind's own name (``rules/fix-first/XID-001.toml``).
RULE_FOLDERS: dict[RuleKind, str] = {kind: kind for kind in RULE_KINDS}

# -- the profile ----------------------------------------------------------------------

WorkloadKind = Literal[
    "training",
    "inference",
    "rendering",
    "cad-cae",
    "simulation",
    "visualization",
    "vdi",
    "media",
    "mixed",
]
WORKLOAD_KINDS: tuple[WorkloadKind, ...] = get_args(WorkloadKind)
Objective = Literal["latency", "throughput", "correctness", "fleet-simplicity"]
OBJECTIVES: tuple[Objective, ...] = get_args(Objective)
Parallelism = Literal["none", "data-parallel", "model-parallel"]
IoPattern = Literal["local-nvme", "network-fs", "object-store", "in-memory"]
Need = Literal["required", "preferred", "no"]
Chassis = Literal["tower", "workstation", "rack-1u", "rack-2u", "rack-4u"]
CHASSIS: tuple[Chassis, ...] = get_args(Chassis)
Airflow = Literal["open", "front-to-back", "restricted"]
AIRFLOWS: tuple[Airflow, ...] = get_args(Airflow)
Experience = Literal["none", "some", "expert"]

# -- the model a profile describes ([workload.model], CONTRACT §6) ----------------------

ModelFamily = Literal["llm", "diffusion", "vision", "other"]
MODEL_FAMILIES: tuple[ModelFamily, ...] = get_args(ModelFamily)
#: Number formats of weights (and of the KV cache), widest first.
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
#: ``unknown``: a training job whose method is not decided yet (read as LoRA, and said so).
ModelTask = Literal["inference", "full-finetune", "lora", "qlora", "pretrain", "unknown"]
MODEL_TASKS: tuple[ModelTask, ...] = get_args(ModelTask)
#: Tasks that train every weight (gradients and optimizer states for all of them).
FULL_TRAINING_TASKS: tuple[ModelTask, ...] = ("full-finetune", "pretrain")
#: Tasks that train adapters beside a frozen base model.
ADAPTER_TASKS: tuple[ModelTask, ...] = ("lora", "qlora")
#: A change a buyer can make that the what-would-change levers try (engine.levers).
LeverKind = Literal[
    "precision",
    "kv-cache",
    "method",
    "checkpointing",
    "optimizer",
    "sequences",
    "context",
    "budget",
    "rack",
    "rent",
]
LEVER_KINDS: tuple[LeverKind, ...] = get_args(LeverKind)
#: How ``vram_need_gib`` came about: stated in the profile, or derived from the model.
SizingSource = Literal["stated", "derived"]

# -- the catalog ----------------------------------------------------------------------

Cooling = Literal["blower", "open-air", "passive"]
COOLINGS: tuple[Cooling, ...] = get_args(Cooling)

#: How a catalog price was obtained (CONTRACT §5 and §6).
PriceKind = Literal[
    "street", "list", "launch-msrp", "reseller", "estimate", "negotiated", "quote-needed"
]
PRICE_KINDS: tuple[PriceKind, ...] = get_args(PriceKind)

#: Whether a SKU can still be bought new (CONTRACT §6).
SkuStatus = Literal["current", "discontinued", "eol"]
SKU_STATUSES: tuple[SkuStatus, ...] = get_args(SkuStatus)

#: NVIDIA vGPU software editions: Virtual PC (office desktops), RTX Virtual Workstation
#: (professional graphics), Virtual Compute Server (compute).
VgpuEdition = Literal["vpc", "vws", "vcs"]
VGPU_EDITIONS: tuple[VgpuEdition, ...] = get_args(VgpuEdition)

#: The vGPU edition a profile asks for (``requirements.vgpu_edition``): ``none`` leaves it
#: to the kind of work (see :func:`gpuadvisor.engine.facts.vgpu_edition_needed`).
VgpuEditionNeed = Literal["none", "vpc", "vws", "vcs"]
VGPU_EDITION_NEEDS: tuple[VgpuEditionNeed, ...] = get_args(VgpuEditionNeed)

#: At what each display a profile asks for runs (``requirements.display_mode``): ``any``
#: counts the card's plain outputs; ``4k60`` and ``8k60`` what its datasheet says it
#: drives at once at 4K / 8K and 60 Hz (``displays_4k60``, ``displays_8k60``).
DisplayMode = Literal["any", "4k60", "8k60"]
DISPLAY_MODES: tuple[DisplayMode, ...] = get_args(DisplayMode)

# -- how values read ------------------------------------------------------------------


def format_value(value: float | int | bool | str | None) -> str:
    """A fact value as a sentence shows it: yes/no, thousands separators, no ``.0``."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
