"""The questionnaire behind ``gpuadvisor ask``: the questions are data, the flow is pure.

:data:`QUESTIONS` lists one :class:`Question` per profile field, in the order they are
asked, each with a plain-language prompt, a one-line "why it matters / what to answer
when unsure", and a predicate over the answers so far that decides whether it applies.
:func:`interview` walks them through a :class:`Dialogue` (the only I/O it does), checks
every answer with the field's own pydantic type and constraints as the profile file
would, and returns a validated :class:`~gpuadvisor.inputs.profile.Profile`. ``cli.py`` supplies
the terminal (or stdin) side of the dialogue and writes the result.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, Protocol, get_args, get_origin

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from gpuadvisor.errors import InputError, InternalError, did_you_mean
from gpuadvisor.inputs.profile import PROFILE_SCHEMA, SECTIONS, Profile, profile_from_data
from gpuadvisor.inputs.textio import locate_field


class Dialogue(Protocol):
    """Where the questions go and the answers come from."""

    def say(self, text: str) -> None:
        """Show a line of text."""

    def ask(self, prompt: str) -> str | None:
        """Show ``prompt`` and return one answer line, or None at end of input."""


class _Unstated:
    """The answer "not known yet": the field is left out and its default applies."""

    def __repr__(self) -> str:
        return "UNSTATED"


UNSTATED: Final = _Unstated()


class Answers:
    """The answers so far, as the ``when`` predicates see them.

    ``answers["workload.kind"]`` is the stated value, or the field's documented default
    when it was not stated (None for a required field not yet answered).
    """

    def __init__(self, stated: Mapping[str, Any]) -> None:
        self._stated = stated

    def __getitem__(self, path: str) -> Any:
        if path in self._stated:
            return self._stated[path]
        info = field_info(path)
        return None if info.is_required() else info.get_default(call_default_factory=True)

    def known(self, path: str) -> bool:
        """Whether ``path`` was answered (or given in the starting file)."""
        return path in self._stated


Predicate = Callable[[Answers], bool]
Converter = Callable[[str], Any]


def always(answers: Answers) -> bool:
    return True


@dataclass(frozen=True)
class Question:
    """One question about one profile field.

    ``convert`` turns the typed text into the raw value pydantic validates (raising
    ValueError with a plain message when it cannot); None picks one from the field's
    type. ``choices`` explains each value of a Literal field in plain words. ``units``
    are words accepted after a number ("40 GB"). ``unknown_answer`` is a word that
    leaves the field unstated, so later questions can tell "not decided yet" apart.
    ``suggest`` proposes a default from earlier answers instead of the model's.
    """

    field: str
    prompt: str
    why: str
    when: Predicate = always
    convert: Converter | None = None
    choices: tuple[tuple[str, str], ...] = ()
    units: tuple[str, ...] = ()
    unknown_answer: str | None = None
    suggest: Callable[[Answers], Any] | None = None


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
RACK_CHASSIS: Final = ("rack-1u", "rack-2u", "rack-4u")


def _reads_data(a: Answers) -> bool:
    return a["workload.kind"] in DATA_KINDS or (
        a["workload.kind"] == "inference" and not a["workload.interactive"]
    )


def _multi_gpu(a: Answers) -> bool:
    return a["workload.parallelism"] != "none" or bool(a["workload.model_parallel_ready"])


def _chassis_known(a: Answers) -> bool:
    return a.known("platform.chassis")


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
        "How much GPU memory does ONE job (or one copy of the model) need at its peak, in GB?",
        "The most important number: a card with less memory cannot run the job at all; if "
        "unsure, ask the engineers what nvidia-smi shows under 'Memory-Usage' during a run "
        "(for AI models, roughly 2.4 GB per billion parameters).",
        units=("gib", "gb", "g"),
    ),
    Question(
        "workload.concurrent_jobs",
        "How many separate jobs (or users, or copies of the model) should run at the same time?",
        "Independent jobs can each get their own card, which is simpler than one job "
        "spread over several cards; if unsure, answer 1.",
        units=("jobs", "job"),
    ),
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
        "requirements.display_sync",
        "Must several displays, projectors or cameras run in lockstep "
        "(Frame Lock, Genlock, a sync board)?",
        "Only some professional cards take a sync board; it is needed for video walls, "
        "immersive rooms and virtual production; if unsure, answer no.",
        when=lambda a: a["workload.kind"] in SYNC_KINDS,
    ),
    Question(
        "requirements.vgpu",
        "Will one card be shared by several users or virtual machines (vGPU, virtual desktops)?",
        "Sharing one card needs a card that NVIDIA's vGPU software supports; if unsure, answer no.",
        when=lambda a: a["workload.kind"] in SHARING_KINDS,
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
        "platform.chassis",
        "What kind of computer or server will the cards go into?",
        "Size, cooling and power of the box limit which cards fit; if it is not decided "
        "yet, answer unknown and the usual tower values are assumed.",
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
        when=_chassis_known,
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
        when=_chassis_known,
        units=("slots", "slot"),
    ),
    Question(
        "platform.gpu_count_max",
        "How many GPU cards can that box take at most?",
        "Buying more cards than fit is wasted money; if unsure, ask IT or the vendor of the box.",
        when=_chassis_known,
        units=("cards", "card", "gpus", "gpu"),
    ),
    Question(
        "platform.psu_headroom_w",
        "How many watts of power are left over for the GPUs in that box?",
        "Cards that draw more than the power supply can give crash or do not start; if "
        "unsure, ask IT or the vendor of the box.",
        when=_chassis_known,
        units=("watts", "watt", "w"),
    ),
    Question(
        "platform.cpu_sockets",
        "How many CPU sockets (processors) does that machine have?",
        "With two, cards attached to different processors talk to each other slowly; if "
        "unsure, answer 1 (most towers and workstations).",
        when=_chassis_known,
    ),
    Question(
        "platform.pcie_gen",
        "Which PCIe generation are the card slots (3, 4 or 5)?",
        "Older slots slow down moving data to the card; if unsure, answer 4 (most machines "
        "built since 2020).",
        when=_chassis_known,
        convert=lambda text: re.sub(r"^(pcie|pci-e|gen)\s*", "", text.strip().lower()),
    ),
    Question(
        "platform.nvlink_possible",
        "Can that box take an NVLink bridge between two cards?",
        "A bridge speeds up jobs spread over several cards; if unsure, answer no.",
        when=lambda a: _chassis_known(a) and _multi_gpu(a),
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
        units=("usd/kwh", "$/kwh", "usd", "$"),
    ),
    Question(
        "meta.notes",
        "Anything else the readers of the report should know (one line)?",
        "Shown in the report as written; leave it empty if there is nothing.",
    ),
)


# -- the field each question is about -------------------------------------------------


def field_info(path: str) -> FieldInfo:
    section, _, name = path.partition(".")
    return SECTIONS[section].model_fields[name]


def _literal_values(annotation: Any) -> tuple[str, ...]:
    for arg in (annotation, *get_args(annotation)):
        if get_origin(arg) is Literal:
            return tuple(str(v) for v in get_args(arg))
    return ()


def _optional(annotation: Any) -> bool:
    return type(None) in get_args(annotation)


def _base_type(annotation: Any) -> Any:
    """``float`` for ``float | None``; the annotation itself otherwise."""
    if _optional(annotation):
        return next(a for a in get_args(annotation) if a is not type(None))
    return annotation


@functools.cache
def _adapter(path: str) -> TypeAdapter[Any]:
    """The field's type with its constraints and its section's number policy.

    This is exactly what the profile model checks for the field (``gt``, ``le``,
    ``max_length``, the Literal choices, no inf/nan), so an answer accepted here is one
    a profile file would accept.
    """
    info = field_info(path)
    section = SECTIONS[path.partition(".")[0]]
    annotated: Any = Annotated
    kind: Any = annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    allow_inf_nan = section.model_config.get("allow_inf_nan", True)
    return TypeAdapter(kind, config=ConfigDict(allow_inf_nan=allow_inf_nan))


def check_value(path: str, raw: Any, *, strict: bool = False) -> Any:
    """The validated value of ``raw`` for field ``path``, or ValueError in plain words.

    ``strict`` is for values read from a profile file, which are typed (TOML, JSON) and
    checked as ``advise`` checks them: ``"20"`` is not a number there. Typed answers
    are text and are converted.
    """
    if strict and isinstance(raw, list):
        raw = tuple(raw)
    try:
        return _adapter(path).validate_python(raw, strict=strict)
    except ValidationError as exc:
        raise ValueError(_explain(path, exc)) from None


def _explain(path: str, exc: ValidationError) -> str:
    error = exc.errors()[0]
    kind = error["type"]
    if kind == "literal_error":
        values = _literal_values(field_info(path).annotation)
        text = f"{error['input']!r} is not one of the choices ({', '.join(values)})"
        hint = did_you_mean(str(error["input"]), values)
        return f"{text}; {hint}" if hint else text
    if kind == "bool_parsing":
        return "answer yes or no"
    if kind == "string_unicode":
        return "the answer is not valid UTF-8 text"
    if kind in ("int_parsing", "int_from_float"):
        return "answer with a whole number, like 2"
    if kind == "float_parsing":
        return "answer with a number, like 2.5"
    message = str(error["msg"])
    return message.replace("Input should", "the answer should", 1)


# -- turning typed text into a value ------------------------------------------------

_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_NONE_WORDS = frozenset({"none", "no", "-", "n/a", "na"})


def _number(units: tuple[str, ...], optional: bool) -> Converter:
    def convert(text: str) -> Any:
        cleaned = text.strip().lower()
        if optional and cleaned in _NONE_WORDS:
            return None
        cleaned = cleaned.removeprefix("$").strip()
        for unit in sorted(units, key=len, reverse=True):
            if cleaned.endswith(unit) and cleaned != unit:
                cleaned = cleaned[: -len(unit)].strip()
                break
        if _THOUSANDS.match(cleaned):
            cleaned = cleaned.replace(",", "")
        return cleaned.replace("_", "")

    return convert


def _yes_no(text: str) -> Any:
    return text.strip().lower()


def _choice(values: tuple[str, ...]) -> Converter:
    def convert(text: str) -> Any:
        cleaned = text.strip().lower()
        if cleaned.isdigit() and 1 <= int(cleaned) <= len(values):
            return values[int(cleaned) - 1]
        return cleaned

    return convert


def _names(text: str) -> Any:
    if text.strip().lower() in _NONE_WORDS:
        return []
    return [part.strip() for part in text.split(",") if part.strip()]


def _text(text: str) -> Any:
    return text.strip()


def converter_for(question: Question) -> Converter:
    if question.convert is not None:
        return question.convert
    annotation = field_info(question.field).annotation
    values = _literal_values(annotation)
    if values:
        return _choice(values)
    base = _base_type(annotation)
    if base is bool:
        return _yes_no
    if base in (int, float):
        return _number(question.units, _optional(annotation))
    if get_origin(base) is tuple:
        return _names
    return _text


def show(value: Any) -> str:
    """A value the way a person would type it back."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value) if value else "none"
    if value == "":
        return "(empty)"
    return str(value)


# -- the flow -----------------------------------------------------------------------

_MISSING: Final = object()

INTRO: Final = (
    "Answer each question and press Enter. An empty answer takes the default shown; "
    "'?' explains a question in more detail."
)


def _default(question: Question, answers: Answers) -> Any:
    """What an empty answer means for a question not answered before (or _MISSING)."""
    if question.unknown_answer is not None:
        return UNSTATED
    if question.suggest is not None:
        suggested = question.suggest(answers)
        if suggested is not None:
            return suggested
    info = field_info(question.field)
    if info.is_required():
        return _MISSING
    return info.get_default(call_default_factory=True)


def _present(dialogue: Dialogue, question: Question, current: Any, default: Any) -> None:
    dialogue.say("")
    dialogue.say(question.prompt)
    dialogue.say(f"  Why: {question.why}")
    info = field_info(question.field)
    values = _literal_values(info.annotation)
    if values:
        labels = dict(question.choices)
        width = max(len(v) for v in values)
        for number, value in enumerate(values, start=1):
            label = labels.get(value, "")
            dialogue.say(f"  {number:>2}) {value:<{width}}  {label}".rstrip())
        if question.unknown_answer is not None:
            dialogue.say(f"      {question.unknown_answer:<{width}}  not decided yet")
    elif _base_type(info.annotation) is bool:
        dialogue.say("  Answer yes or no.")
    elif get_origin(_base_type(info.annotation)) is tuple:
        dialogue.say("  Separate several names with commas; 'none' for no names.")
    if current is not _MISSING:
        dialogue.say(f"  Enter keeps the current answer: {show(current)}")
    elif default is UNSTATED:
        dialogue.say(f"  Default: {question.unknown_answer}")
    elif default is not _MISSING:
        dialogue.say(f"  Default: {show(default)}")
    else:
        dialogue.say("  An answer is needed.")


def _details(question: Question) -> str:
    info = field_info(question.field)
    return f"  In the profile this is {question.field}: {info.description or ''}"


def ask_question(dialogue: Dialogue, question: Question, answers: Answers, current: Any) -> Any:
    """The validated answer to one question (UNSTATED for "not known yet").

    A wrong answer is explained and the question asked again; end of input is an
    InputError naming the field that was left without an answer.
    """
    default = _default(question, answers)
    _present(dialogue, question, current, default)
    convert = converter_for(question)
    while True:
        line = dialogue.ask("> ")
        if line is None:
            raise InputError(
                "input ended before the questionnaire was complete; nothing was written",
                field=question.field,
                hint="give one answer per line (an empty line takes the default)",
            )
        text = line.strip()
        if text == "?":
            dialogue.say(_details(question))
            continue
        if not text:
            if current is not _MISSING:
                return current
            if default is not _MISSING:
                return default
            dialogue.say("  This one needs an answer.")
            continue
        if question.unknown_answer is not None and text.lower() == question.unknown_answer:
            return UNSTATED
        try:
            return check_value(question.field, convert(text))
        except ValueError as exc:
            dialogue.say(f"  Not accepted: {exc}. Please answer again.")


def starting_answers(
    document: Mapping[str, Any], *, name: str, text: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The answers an existing (possibly partial) profile already gives.

    Unknown sections or keys and a wrong schema are errors, as in ``advise``; a value
    the model does not accept is dropped with a note, so its question is asked again.
    Returns the answers keyed by field path and the notes to show.
    """
    stated: dict[str, Any] = {}
    notes: list[str] = []

    def where(*loc: str) -> int | None:
        return locate_field(text, loc) if text is not None else None

    for key, value in document.items():
        if key == "schema":
            if value != PROFILE_SCHEMA:
                raise InputError(
                    f"unsupported schema {value!r}",
                    file=name,
                    line=where("schema"),
                    field="schema",
                    hint=f"this gpuadvisor reads '{PROFILE_SCHEMA}'",
                )
            continue
        if key not in SECTIONS:
            raise InputError(
                "unknown key",
                file=name,
                line=where(key),
                field=key,
                hint=did_you_mean(key, ["schema", *SECTIONS]),
            )
        if not isinstance(value, dict):
            raise InputError(f"expected a table [{key}]", file=name, line=where(key), field=key)
        fields = SECTIONS[key].model_fields
        for field, raw in value.items():
            path = f"{key}.{field}"
            if field not in fields:
                raise InputError(
                    "unknown key",
                    file=name,
                    line=where(key, field),
                    field=path,
                    hint=did_you_mean(field, fields),
                )
            try:
                stated[path] = check_value(path, raw, strict=True)
            except ValueError as exc:
                notes.append(f"{name}: {path}: not accepted ({exc}); it is asked again.")
    return stated, notes


def as_document(stated: Mapping[str, Any]) -> dict[str, Any]:
    """Answers keyed by field path, as the nested data a profile file holds."""
    document: dict[str, Any] = {"schema": PROFILE_SCHEMA}
    for path, value in stated.items():
        section, _, name = path.partition(".")
        document.setdefault(section, {})[name] = value
    return document


def interview(
    dialogue: Dialogue,
    *,
    start: Mapping[str, Any] | None = None,
    start_name: str = "",
    start_text: str | None = None,
    review: bool | None = None,
    questions: tuple[Question, ...] = QUESTIONS,
) -> Profile:
    """Ask every question that applies and return the validated profile.

    With ``start`` (the parsed document of an existing profile), questions it already
    answers are skipped unless ``review`` is true; when ``review`` is None and there is
    something to review, the dialogue asks whether to go through those answers too, and
    then each of them offers "keep the current answer" as its default.
    """
    stated: dict[str, Any] = {}
    if start is not None:
        stated, notes = starting_answers(start, name=start_name, text=start_text)
        for note in notes:
            dialogue.say(note)
    dialogue.say(INTRO)
    if stated and review is None:
        review = _ask_review(dialogue, len(stated), start_name or "the starting profile")
    for question in questions:
        answers = Answers(stated)
        if not question.when(answers):
            continue
        current = stated.get(question.field, _MISSING)
        if current is not _MISSING and not review:
            continue
        value = ask_question(dialogue, question, answers, current)
        if value is UNSTATED:
            stated.pop(question.field, None)
        else:
            stated[question.field] = value
    return profile_from_data(as_document(stated), name=start_name or "<answers>")


def _ask_review(dialogue: Dialogue, count: int, name: str) -> bool:
    """Whether to go through the answers the starting profile already gives."""
    plural = "s" if count != 1 else ""
    dialogue.say("")
    dialogue.say(f"{name} already answers {count} question{plural}. Go through those too?")
    dialogue.say(
        "  Why: answer no to be asked only what is missing; yes shows each answer with "
        "'keep the current answer' as the default."
    )
    dialogue.say("  Answer yes or no.")
    dialogue.say("  Default: no")
    while True:
        line = dialogue.ask("> ")
        if line is None:
            raise InputError(
                "input ended before the questionnaire was complete; nothing was written",
                hint="give one answer per line (an empty line takes the default)",
            )
        if not line.strip():
            return False
        try:
            return bool(_YES_NO.validate_python(line.strip().lower()))
        except ValidationError:
            dialogue.say("  Not accepted: answer yes or no. Please answer again.")


_YES_NO: Final = TypeAdapter(bool)


ASK_HEADER: Final = [
    "# gpuadvisor workload profile, written by `gpuadvisor ask`. Each comment says what",
    "# the field means; edit freely, then `gpuadvisor advise THIS_FILE` gives the answer.",
    "# A commented-out line is an optional field left unset.",
]


def profile_document(profile: Profile) -> str:
    """The commented TOML for ``profile``, checked to load back to the same profile."""
    from gpuadvisor.inputs.examples import profile_text
    from gpuadvisor.inputs.profile import parse_profile

    text = profile_text(profile, header=ASK_HEADER)
    if parse_profile(text, "<ask output>") != profile:
        raise InternalError("the written profile would not load back unchanged")
    return text
