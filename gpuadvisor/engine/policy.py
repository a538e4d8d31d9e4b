"""The numbers the engine's arithmetic uses, read from ``rules/_policy.toml``.

Usable memory (reserve and ECC by memory type), the headroom a job keeps, the power left
after a transient margin and a wall circuit, the speed a power limit costs, how one
data-parallel job scales over a link, and the default slot spacing. They are judgements,
so they are data with their reasons and sources (and worked examples, which
``tests/test_policy.py`` runs); this module only validates them and does the arithmetic.
Yes/no judgements stay in the rule files that make them.
"""

import math
from collections.abc import Mapping
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from gpuadvisor.engine.decode import DecodePolicy
from gpuadvisor.engine.policy_base import StrictSection as _Strict
from gpuadvisor.engine.policy_ranking import RankingPolicy
from gpuadvisor.errors import InputError
from gpuadvisor.inputs.textio import load_document
from gpuadvisor.inputs.validation import input_error
from gpuadvisor.resources import data_dir

POLICY_FILE = "_policy.toml"

Link = Literal["nvlink", "pcie-p2p", "pcie-host", "cross-socket"]
LINKS: tuple[Link, ...] = ("nvlink", "pcie-p2p", "pcie-host", "cross-socket")


class Reserve(_Strict):
    up_to_gib: float = Field(gt=0)
    mib: float = Field(ge=0, le=65_536)


class MemoryExample(_Strict):
    name: str
    vram_gib: float = Field(gt=0)
    memory_type: str
    ecc_on: bool
    capture_mib: float = Field(gt=0)


class MemoryPolicy(_Strict):
    why: str = Field(min_length=40)
    ecc_share: dict[str, float]
    ecc_share_unknown_type: float = Field(ge=0, lt=0.5)
    ecc_on_by_default: tuple[str, ...] = ()
    reserve_mib: tuple[Reserve, ...] = Field(min_length=1)
    sources: tuple[str, ...] = Field(min_length=1)
    examples: tuple[MemoryExample, ...] = ()


class KindHeadroom(_Strict):
    min_gib: float = Field(ge=0, le=64)
    share: float = Field(ge=0, le=1)
    basis: Literal["usable", "label"] = "usable"


class HeadroomExample(_Strict):
    name: str
    kind: str
    need_gib: float = Field(gt=0)
    usable_gib: float = Field(gt=0)
    jobs: int = Field(ge=0)


class ProfileExample(_Strict):
    name: str
    need_gib: float = Field(gt=0)
    frame_buffer_gib: float = Field(gt=0)
    desktops_wanted: int = Field(ge=1)
    profile_gib: float = Field(gt=0)
    desktops: int = Field(ge=0)


class ProfilePolicy(_Strict):
    why: str = Field(min_length=40)
    sizes_gib: tuple[float, ...] = Field(min_length=1)
    sources: tuple[str, ...] = Field(min_length=1)
    examples: tuple[ProfileExample, ...] = ()

    @field_validator("sizes_gib")
    @classmethod
    def _ascending(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if any(b <= a for a, b in pairwise(value)) or value[0] <= 0:
            raise ValueError("profile sizes must be positive and ascending")
        return value


class HeadroomPolicy(_Strict):
    why: str = Field(min_length=40)
    min_gib: float = Field(ge=0, le=64)
    share: float = Field(ge=0, le=1)
    kinds: dict[str, KindHeadroom] = Field(default_factory=dict)
    sources: tuple[str, ...] = Field(min_length=1)
    examples: tuple[HeadroomExample, ...] = ()
    #: The vGPU profile sizes work counted against the label is cut into.
    profiles: ProfilePolicy


class SharingPolicy(_Strict):
    why: str = Field(min_length=40)
    kinds: tuple[str, ...]
    sources: tuple[str, ...] = Field(min_length=1)


class PowerExample(_Strict):
    """Cards' board power against a host (the profile's platform fields of that name)."""

    name: str
    board_w: float = Field(gt=0)
    psu_headroom_w: float = Field(800, ge=0)
    psu_w: float = Field(0, ge=0)
    circuit_w: float = Field(ge=0)
    cpu_w: float | None = Field(None, ge=0)
    system_w: float | None = Field(None, ge=0)
    cpu_sockets: int = Field(1, ge=1)
    cut: float = Field(ge=0, le=1)


class PowerPolicy(_Strict):
    why: str = Field(min_length=40)
    transient_margin: float = Field(ge=0, lt=1)
    circuit_continuous_share: float = Field(gt=0, le=1)
    psu_efficiency: float = Field(gt=0, le=1)
    #: The host's own draw where the profile does not state it (platform.cpu_w,
    #: platform.system_w): the CPUs' per socket, and the board, memory, drives and fans.
    cpu_w_per_socket: float = Field(ge=0)
    system_w: float = Field(ge=0)
    #: A card of at most this board power draws from the x16 slot alone (PCIe CEM):
    #: the transient margin is not applied to it.
    slot_power_w: float = Field(gt=0, le=150)
    speed_loss_per_power_cut: float = Field(ge=0, le=1)
    sources: tuple[str, ...] = Field(min_length=1)
    examples: tuple[PowerExample, ...] = ()


class NoP2p(_Strict):
    segment: str
    architecture: str


class DataParallelExample(_Strict):
    name: str
    link: Link
    sync_heavy: bool
    keeps: float = Field(gt=0, le=1)


class DataParallelPolicy(_Strict):
    why: str = Field(min_length=40)
    efficiency: dict[Link, float]
    sync_heavy_loss_factor: float = Field(ge=1, le=10)
    no_p2p: tuple[NoP2p, ...] = ()
    sources: tuple[str, ...] = Field(min_length=1)
    examples: tuple[DataParallelExample, ...] = ()


class SlotsExample(_Strict):
    name: str
    chassis: str
    gpu_count_max: int = Field(ge=1)
    max_gpu_slot_width: int = Field(ge=1)
    slots: int = Field(ge=1)


class SlotsPolicy(_Strict):
    why: str = Field(min_length=40)
    dense_from_cards: int = Field(ge=2)
    dense_chassis: tuple[str, ...]
    dense_slots_per_card: int = Field(ge=1, le=5)
    sources: tuple[str, ...] = Field(min_length=1)
    examples: tuple[SlotsExample, ...] = ()


class DisplaysExample(_Strict):
    name: str
    display_sync: bool
    cards: int = Field(ge=1)
    board: bool


class DisplaysPolicy(_Strict):
    """When a pick gets a sync board beside its cards (engine/displays.py counts them)."""

    why: str = Field(min_length=40)
    board_with_display_sync: bool
    board_for_several_cards_without_sync: bool
    sources: tuple[str, ...] = Field(min_length=1)
    examples: tuple[DisplaysExample, ...] = ()

    def board_wanted(self, display_sync: bool, cards: int) -> bool:
        """Whether one host's ``cards`` take a sync board."""
        if display_sync:
            return self.board_with_display_sync
        return cards > 1 and self.board_for_several_cards_without_sync


class Policy(_Strict):
    """The whole policy file, validated."""

    version: str
    memory: MemoryPolicy
    headroom: HeadroomPolicy
    sharing: SharingPolicy
    power: PowerPolicy
    data_parallel: DataParallelPolicy
    slots: SlotsPolicy
    ranking: RankingPolicy
    decode: DecodePolicy
    displays: DisplaysPolicy

    # -- memory ---------------------------------------------------------------------

    def ecc_share(self, memory_type: str) -> float:
        shares = self.memory.ecc_share
        return shares.get(memory_type, self.memory.ecc_share_unknown_type)

    def reserve_mib(self, vram_gib: float) -> float:
        for step in self.memory.reserve_mib:
            if vram_gib <= step.up_to_gib:
                return step.mib
        return self.memory.reserve_mib[-1].mib

    def estimated_usable_mib(self, vram_gib: float, memory_type: str, ecc_on: bool) -> float:
        """What one process can allocate on a card the catalog describes this way."""
        label = vram_gib * 1024.0
        ecc = label * self.ecc_share(memory_type) if ecc_on else 0.0
        return label - ecc - self.reserve_mib(vram_gib)

    def usable_mib(
        self,
        vram_gib: float,
        memory_type: str,
        ecc_on: bool,
        captured_mib: float | None,
        ecc_on_by_default: bool,
    ) -> float:
        """A capture where there is one (taken in the card's default ECC state; turning
        ECC on from there costs its share), else the estimate."""
        if captured_mib is None:
            return self.estimated_usable_mib(vram_gib, memory_type, ecc_on)
        if ecc_on and not ecc_on_by_default:
            return captured_mib - vram_gib * 1024.0 * self.ecc_share(memory_type)
        return captured_mib

    # -- headroom -------------------------------------------------------------------

    def _kind(self, kind: str) -> tuple[float, float, bool]:
        """(min GiB, share, counted against the label) of this kind's headroom."""
        found = self.headroom.kinds.get(kind)
        if found is not None:
            return found.min_gib, found.share, found.basis == "label"
        return self.headroom.min_gib, self.headroom.share, False

    def headroom_gib(self, kind: str, need_gib: float) -> float:
        """Memory one job keeps free beyond its need."""
        min_gib, share, _ = self._kind(kind)
        return max(min_gib, share * need_gib)

    def largest_need_gib(self, kind: str, space_gib: float) -> float:
        """The largest need whose job, with its headroom, fits ``space_gib``."""
        min_gib, share, _ = self._kind(kind)
        need = space_gib / (1 + share)
        return need if share * need >= min_gib else space_gib - min_gib

    def shares_cards(self, kind: str, vgpu: bool = False) -> bool:
        """Whether several jobs of this kind run side by side on one card (any kind does
        when the profile asks for vGPU: each tenant gets a profile of a shared card)."""
        return vgpu or kind in self.sharing.kinds

    def counts_label(self, kind: str, vgpu: bool = False) -> bool:
        """Whether this kind's jobs are counted against the label (vGPU profiles)."""
        return vgpu or self._kind(kind)[2]

    def jobs_per_card(self, kind: str, need_gib: float, basis_gib: float) -> int:
        """Jobs of ``need_gib`` (each with its headroom) that ``basis_gib`` holds."""
        return self.jobs_in(basis_gib, self.job_footprint_gib(kind, need_gib))

    def job_footprint_gib(self, kind: str, need_gib: float) -> float:
        """Memory one job takes on a card: its need and its headroom."""
        return need_gib + self.headroom_gib(kind, need_gib)

    @staticmethod
    def jobs_in(basis_gib: float, footprint_gib: float) -> int:
        """Jobs of ``footprint_gib`` each that ``basis_gib`` holds."""
        return max(0, math.floor(basis_gib / footprint_gib + 1e-9))

    # -- power ----------------------------------------------------------------------

    def host_draw_w(
        self, cpu_w: float | None = None, system_w: float | None = None, sockets: int = 1
    ) -> float:
        """What the host itself draws beside the GPUs: the stated figures, else the
        policy's (per CPU socket, and the rest of the machine)."""
        power = self.power
        cpus = power.cpu_w_per_socket * sockets if cpu_w is None else cpu_w
        return cpus + (power.system_w if system_w is None else system_w)

    @staticmethod
    def gpu_power_available_w(psu_headroom_w: float, psu_w: float, host_w: float) -> float:
        """Power the supply leaves for the GPUs: its rating less the host's own draw when
        the rating is stated (``psu_w`` above 0), else the stated headroom."""
        return max(0.0, psu_w - host_w) if psu_w > 0 else psu_headroom_w

    def psu_budget_w(self, psu_headroom_w: float) -> float:
        """Sustained board power the GPUs may draw from the supply, given the power it
        leaves for them (:meth:`gpu_power_available_w`)."""
        return psu_headroom_w * (1.0 - self.power.transient_margin)

    def circuit_budget_w(self, circuit_w: float, host_w: float | None = None) -> float | None:
        """Board power the GPUs may draw from the wall circuit (None: not stated): what it
        carries all day, through the supply, less the host's own draw (``host_w``; the
        policy's for a one-socket host when not given)."""
        if circuit_w <= 0:
            return None
        power = self.power
        wall = circuit_w * power.circuit_continuous_share * power.psu_efficiency
        return max(0.0, wall - (self.host_draw_w() if host_w is None else host_w))

    @staticmethod
    def power_cut(board_w: float, *budgets: float | None) -> float:
        """Share of board power a limit must take off to fit every budget (0: none)."""
        known = [b for b in budgets if b is not None]
        if not known or board_w <= 0:
            return 0.0
        allowed = min(known)
        return 0.0 if board_w <= allowed else 1.0 - allowed / board_w

    def speed_kept(self, cut: float) -> float:
        """Share of full speed a card power-limited by ``cut`` keeps."""
        return 1.0 - self.power.speed_loss_per_power_cut * cut

    # -- data parallel --------------------------------------------------------------

    def scaling_kept(self, link: Link, sync_heavy: bool) -> float:
        """Share of ideal scaling one data-parallel job keeps over this link."""
        loss = 1.0 - self.data_parallel.efficiency[link]
        if sync_heavy:
            loss *= self.data_parallel.sync_heavy_loss_factor
        return max(0.05, 1.0 - loss)

    def has_p2p(self, segment: str, architecture: str) -> bool:
        return not any(
            rule.segment == segment and rule.architecture == architecture
            for rule in self.data_parallel.no_p2p
        )

    # -- slots ----------------------------------------------------------------------

    def default_slots(self, chassis: str, gpu_count_max: int, max_gpu_slot_width: int) -> int:
        slots = self.slots
        if gpu_count_max >= slots.dense_from_cards and chassis in slots.dense_chassis:
            return gpu_count_max * min(max_gpu_slot_width, slots.dense_slots_per_card)
        return gpu_count_max * max_gpu_slot_width


def _merge(base: dict[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Tables merge key by key; any other value replaces."""
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def policy_from_data(data: Mapping[str, Any], *, name: str, text: str | None = None) -> Policy:
    try:
        return Policy.model_validate(dict(data))
    except ValidationError as exc:
        raise input_error(
            exc, file=name, text=text, known_names=lambda loc: list(Policy.model_fields)
        ) from None


def read_policy(base: tuple[dict[str, Any], str, str], overlays: tuple[Path, ...] = ()) -> Policy:
    """The policy of ``base`` (data, text, file name) with each overlay's file applied."""
    data, text, name = base
    policy = policy_from_data(data, name=name, text=text)
    merged = dict(data)
    for folder in overlays:
        path = folder / POLICY_FILE
        if not path.is_file():
            continue
        extra, extra_text = load_document(path)
        merged = _merge(merged, extra)
        policy = policy_from_data(merged, name=str(path), text=extra_text)
    return policy


@lru_cache(maxsize=1)
def bundled_policy() -> Policy:
    """The bundled policy alone (what an engine made without a rule base uses)."""
    path = data_dir("rules") / POLICY_FILE
    if not path.is_file():
        raise InputError("the bundled rules folder has no policy file", file=str(path))
    data, text = load_document(path)
    return read_policy((data, text, str(path)))
