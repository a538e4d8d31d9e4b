"""The questions, as data: one :class:`Question` per profile field, in the order they
are asked, with the predicate over earlier answers that decides whether it applies."""

from __future__ import annotations

from typing import Final

from gpuadvisor.ask.decode_questions import DECODE_QUESTIONS
from gpuadvisor.ask.display_questions import DISPLAY_QUESTIONS
from gpuadvisor.ask.fields import Answers
from gpuadvisor.ask.model_questions import MODEL_QUESTIONS, memory_gib
from gpuadvisor.ask.platform_questions import (
    HOSTS_QUESTION,
    PLATFORM_QUESTIONS,
    RACK_CHASSIS,
    hosts_aside,
    jobs_check,
)
from gpuadvisor.ask.question import Converter, Question

__all__ = ["QUESTIONS", "RACK_CHASSIS", "Converter", "Question"]


# -- which kinds of work make which questions meaningful ------------------------------

#: Work whose software may spread one job across several GPUs.
MULTI_GPU_KINDS: Final = ("training", "inference", "simulation", "mixed")
#: Work made of jobs that run for a while and then finish.
BATCH_KINDS: Final = ("training", "rendering", "cad-cae", "simulation", "media", "mixed")
#: Work that puts pictures on someone's screen.
GRAPHICS_KINDS: Final = ("rendering", "visualization", "vdi", "cad-cae", "media", "mixed")
#: Work that streams a data set from storage.
DATA_KINDS: Final = ("training", "simulation", "rendering", "media", "mixed")
#: Work where vendor applications often demand certified drivers.
PRO_APP_KINDS: Final = ("rendering", "cad-cae", "simulation", "visualization", "media", "mixed")
#: Work where displays, projectors or cameras may have to run in lockstep.
SYNC_KINDS: Final = ("rendering", "visualization", "cad-cae", "media", "mixed")
#: Work where one card may be shared by several users or virtual machines.
SHARING_KINDS: Final = ("vdi", "visualization", "cad-cae", "inference", "mixed")


def _reads_data(a: Answers) -> bool:
    return a["workload.kind"] in DATA_KINDS or (
        a["workload.kind"] == "inference" and not a["workload.interactive"]
    )


QUESTIONS: Final[tuple[Question, ...]] = (
    Question(
        "meta.title",
        "What should this request be called?",
        "It heads the report so readers know which purchase it is about; a few words "
        "are enough, or leave it empty.",
    ),
    Question(
        "meta.requester",
        "Who is asking for this purchase (a team or a person)?",
        "Only shown in the report, so readers know whom to ask; leave it empty if you prefer.",
    ),
    Question(
        "workload.kind",
        "What will the GPUs mostly be used for?",
        "Different work needs different cards; if unsure, pick the closest, or 'mixed'.",
        choices=(
            ("training", "teaching or fine-tuning AI models on data"),
            ("inference", "running trained AI models to answer requests"),
            ("rendering", "producing images, animation or video frames"),
            ("cad-cae", "engineering design and analysis software (CAD, CAE, FEA, CFD)"),
            ("simulation", "scientific or engineering number crunching (HPC, physics)"),
            ("visualization", "interactive 3-D views, digital twins, large displays"),
            ("vdi", "virtual desktops: many users share GPUs over the network"),
            ("media", "video encoding, decoding, transcoding, streaming"),
            ("mixed", "several of the above on the same machines"),
        ),
    ),
    Question(
        "workload.objective",
        "What matters most for this work?",
        "It decides how cards are ranked; if unsure, ask the users what they complain "
        "about: waiting for each answer means latency, too few results per day throughput.",
        choices=(
            ("latency", "each single answer must come back fast"),
            ("throughput", "as many results per hour or per dollar as possible"),
            ("correctness", "results must be right; an unnoticed error is the worst outcome"),
            ("fleet-simplicity", "easy to buy, run and replace across many identical machines"),
        ),
    ),
    Question(
        "workload.latency_slo_ms",
        "At most how many milliseconds may one answer take (1 second = 1000)?",
        "A firm time limit rules out slower set-ups; if there is no agreed limit, answer none.",
        when=lambda a: a["workload.objective"] == "latency",
        units=("ms", "milliseconds"),
    ),
    Question(
        "workload.interactive",
        "Does a person sit and wait for each result?",
        "Waiting people make speed and smoothness matter more than volume; if unsure, "
        "answer yes when results appear on someone's screen within a minute or so.",
        when=lambda a: a["workload.kind"] != "training",
    ),
    Question(
        "workload.vram_need_gib",
        "How much GPU memory does ONE job (or one copy of the model) need at its peak, in "
        "GiB? Give the number, or answer describe to describe the AI model instead.",
        "The most important number: a card with less memory cannot run the job at all; if "
        "unsure, ask the engineers what nvidia-smi shows under 'Memory-Usage' during a run "
        "(MiB are understood), or, for an AI model, answer describe (or don't know) and "
        "gpuadvisor estimates it from the model you name.",
        convert=memory_gib,
        units=("gib", "gb", "g", "mib"),
        reads_unknown=True,
        also="describe, to describe the AI model instead",
    ),
    *MODEL_QUESTIONS,
    HOSTS_QUESTION,
    Question(
        "workload.concurrent_jobs",
        "How many separate jobs (or users, or copies of the model) should run at the same time?",
        "Independent jobs can each get their own card, which is simpler than one job "
        "spread over several cards; if unsure, answer 1 (or one per machine).",
        units=("jobs", "job", "seats", "seat", "users", "user"),
        aside=hosts_aside,
        check=jobs_check,
        suggest=lambda a: a["platform.hosts"] if a["platform.hosts"] > 1 else None,
    ),
    *DECODE_QUESTIONS,
    Question(
        "workload.parallelism",
        "Does the software already use several GPUs for ONE job, and how?",
        "Spreading one job over several cards only pays off if the software does it "
        "today; if unsure, answer none.",
        when=lambda a: a["workload.kind"] in MULTI_GPU_KINDS,
        choices=(
            ("none", "each job runs on one GPU (or you do not know)"),
            ("data-parallel", "each GPU holds a full copy and works on part of the data"),
            ("model-parallel", "one model is split across several GPUs"),
        ),
    ),
    Question(
        "workload.model_parallel_ready",
        "Could the team set up and run ONE model split across several GPUs "
        "(tensor or pipeline parallelism)?",
        "Without that skill, a model too big for one card needs one bigger card instead; "
        "if unsure, answer no.",
        when=lambda a: a["workload.kind"] in MULTI_GPU_KINDS,
    ),
    Question(
        "workload.sync_heavy",
        "When one job uses several GPUs, must they exchange data very often "
        "(small batches per GPU, many small pieces)?",
        "Such jobs slow down badly without a fast link between the cards; if unsure, "
        "answer no and let the engineers check.",
        when=lambda a: a["workload.parallelism"] != "none",
    ),
    Question(
        "workload.gpus_per_job",
        "How many GPUs does ONE job use today, or is it meant to use?",
        "A job spread over several cards needs all of them at once; if unsure, answer 1.",
        when=lambda a: a["workload.parallelism"] != "none",
        units=("gpus", "gpu", "cards", "card"),
    ),
    Question(
        "workload.sharded_data_parallel",
        "Does that job shard its model state over the GPUs (FSDP or ZeRO stage 3)?",
        "Without sharding every GPU holds a full copy: bigger cards, not more; if unsure, no.",
        when=lambda a: a["workload.parallelism"] == "data-parallel",
    ),
    Question(
        "workload.job_hours",
        "How long does one typical job run, in hours (30 minutes = 0.5)?",
        "Long jobs make crashes and memory errors costlier; if unsure, give a rough figure.",
        when=lambda a: a["workload.kind"] in BATCH_KINDS,
        units=("hours", "hour", "h"),
    ),
    Question(
        "workload.frame_pacing_critical",
        "Must the picture stay perfectly smooth, without stutter, while people work with it?",
        "Smooth frame timing favours one strong card over several sharing the picture; if "
        "unsure, answer no unless users have complained about stutter.",
        when=lambda a: a["workload.kind"] in GRAPHICS_KINDS and bool(a["workload.interactive"]),
    ),
    Question(
        "workload.io_pattern",
        "Where does the work read its input data from?",
        "Slow storage leaves any GPU waiting, so a new card would not help; if unsure, "
        "answer local-nvme.",
        when=_reads_data,
        choices=(
            ("local-nvme", "fast disks inside the same machine"),
            ("network-fs", "a shared network drive (NFS, SMB, Lustre, GPFS)"),
            ("object-store", "cloud-style storage (S3, MinIO, Azure Blob)"),
            ("in-memory", "it all fits in the machine's memory, or there is little input"),
        ),
    ),
    Question(
        "workload.small_files",
        "Is the input data made of very many small files (for example millions of images)?",
        "Many small files slow reading down whatever GPU you buy, above all over a "
        "network; if unsure, answer no.",
        when=lambda a: _reads_data(a) and a["workload.io_pattern"] != "in-memory",
    ),
    Question(
        "workload.needs_fp64",
        "Does the solver compute in double precision (FP64), as many CFD, FEA and "
        "chemistry codes do?",
        "Most graphics and professional cards run FP64 at 1/64 of their normal speed; only "
        "data-center cards such as A100 and H100 run it fast; if unsure, answer no.",
        when=lambda a: a["workload.kind"] in ("simulation", "cad-cae", "mixed"),
    ),
    Question(
        "requirements.ecc",
        "Do you need error-correcting GPU memory (ECC)?",
        "ECC catches memory errors that would otherwise change results unnoticed and only "
        "comes on professional and data-center cards; if unsure and no policy demands "
        "it, answer no.",
        choices=(
            ("required", "must have it (a policy, a regulation, long unattended runs)"),
            ("preferred", "welcome if it does not cost much more"),
            ("no", "not needed"),
        ),
    ),
    Question(
        "requirements.silent_corruption_unacceptable",
        "Would a wrong result that nobody notices be worse than a crash?",
        "If so, only cards with error-correcting memory are considered (think medical, "
        "financial or scientific results); if unsure, answer no.",
        when=lambda a: a["requirements.ecc"] != "required",
    ),
    Question(
        "requirements.certified_drivers",
        "Does a software vendor (CAD, simulation, ...) support its product only on "
        "certified GPU drivers?",
        "Certified drivers exist only for professional cards; if unsure, check the "
        "vendor's hardware list, or answer no.",
        when=lambda a: a["workload.kind"] in PRO_APP_KINDS,
    ),
    Question(
        "requirements.isv_apps",
        "Which of those vendor applications will run on it (separate them with commas)?",
        "They are listed in the report so the certification can be checked; if unsure, "
        "leave it empty.",
        when=lambda a: bool(a["requirements.certified_drivers"]),
    ),
    Question(
        "requirements.min_card_memory_gb",
        "Does a software vendor ask for a minimum card memory, in GB (such as 'requires a "
        "24 GB GPU')? Answer none if not.",
        "Some CAD, visualization, rendering and simulation vendors support their product "
        "only on cards of a stated size, whatever one job needs; it is checked against the "
        "card's label; if unsure, check the vendor's system requirements, or answer none.",
        when=lambda a: a["workload.kind"] in PRO_APP_KINDS,
        units=("gb",),
    ),
    Question(
        "requirements.display_sync",
        "Must several displays, projectors or cameras run in lockstep "
        "(Frame Lock, Genlock, a sync board)?",
        "Only some professional cards take a sync board; it is needed for video walls, "
        "immersive rooms and virtual production; if unsure, answer no.",
        when=lambda a: a["workload.kind"] in SYNC_KINDS,
    ),
    *DISPLAY_QUESTIONS,
    Question(
        "requirements.vgpu",
        "Will one card be shared by several users or virtual machines (vGPU, virtual desktops)?",
        "Sharing one card needs a card that NVIDIA's vGPU software supports; if unsure, answer no.",
        when=lambda a: a["workload.kind"] in SHARING_KINDS,
    ),
    Question(
        "requirements.vgpu_edition",
        "Which NVIDIA vGPU edition will the users need?",
        "Editions differ in what runs and in licence price (vWS costs several times vPC), and "
        "compute-only cards support only vCS; if unsure, answer none.",
        when=lambda a: bool(a["requirements.vgpu"]),
        choices=(
            ("none", "not decided: judged from the kind of work"),
            ("vpc", "Virtual PC: office desktops, browsers, video"),
            ("vws", "RTX Virtual Workstation: CAD and professional graphics"),
            ("vcs", "Virtual Compute Server: compute VMs (AI, HPC)"),
        ),
    ),
    Question(
        "requirements.lifecycle_years",
        "For how many years should the cards stay in service?",
        "Longer service favours cards with longer support and better reliability; if "
        "unsure, answer 3.",
        units=("years", "year", "y"),
    ),
    Question(
        "requirements.fleet_homogeneity",
        "Must many machines get identical cards?",
        "Identical cards simplify running a fleet but narrow the choice to models sold for "
        "years; if unsure, answer no.",
    ),
    Question(
        "requirements.downtime_cost_per_hour_usd",
        "What does one hour of this system being down cost, in US dollars?",
        "High downtime costs justify more reliable (and dearer) cards; if unsure, answer 0.",
        units=("usd", "dollars", "$"),
    ),
    Question(
        "team.multi_gpu_experience",
        "How much experience does the team have running one job on several GPUs?",
        "Multi-GPU set-ups take skill to run and debug; if unsure, answer none.",
        choices=(
            ("none", "nobody has done it"),
            ("some", "done it, with some help or trial and error"),
            ("expert", "builds and debugs multi-GPU jobs routinely"),
        ),
    ),
    *PLATFORM_QUESTIONS,
    Question(
        "budget.max_usd",
        "What is the most you can spend on GPU cards, in total, in US dollars?",
        "Options over budget are left out; if unsure, give the amount you could get approved.",
        units=("usd", "dollars", "$"),
    ),
    Question(
        "budget.electricity_usd_per_kwh",
        "What does electricity cost, in US dollars per kWh?",
        "It prices the power the cards draw over their service life; if unsure, keep the default.",
        units=("usd/kwh", "$/kwh", "/kwh", "per kwh", "usd", "$"),
    ),
    Question(
        "meta.notes",
        "Anything else the readers of the report should know (one line)?",
        "Shown in the report as written; leave it empty if there is nothing.",
    ),
)
