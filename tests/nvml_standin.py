"""A stand-in for the ``pynvml`` module, driven by recorded tables (tests/fixtures/nvml).

A scenario file holds, per GPU, what each NVML function returns. An entry is:

- a plain value (number, string, list); a JSON object becomes an attribute object the
  way pynvml returns ctypes structures (``busId`` as bytes, like the real one);
- ``{"error": "NotSupported"}``: raise the real ``pynvml.NVMLError_NotSupported``
  (any ``NVMLError_*`` name; ``LibraryMismatch`` raises ``NVMLLibraryMismatchError``);
- ``{"series": [v0, v1, ...]}``: the n-th call with those arguments returns the n-th
  value, the last one repeating (entries may be errors);
- ``{"by_arg": {"1": v, "2": w}}``: chosen by the first argument after the handle.

A function a GPU's table does not list raises ``NVMLError_NotSupported``. Besides the
per-GPU tables a scenario may give ``driver_version``, ``cuda_driver_version``,
``init_error``, ``missing_functions`` (the driver's library lacks them:
``NVMLError_FunctionNotFound``), ``process_names``, ``pairs`` (``"0-1"`` -> table of
pair functions), ``events`` (``{"at_s": 3, "gpu": 1, "xid": 79}``, delivered through
the event set once that much fake time has passed) and per GPU ``lost_at_s`` (every
call on that GPU from then on raises ``NVMLError_GpuIsLost``) and ``mig_devices``.

Only names that real pynvml defines can be called; every call is recorded in ``calls``
(name, number of arguments) so a test can check them against the real module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pynvml as real

SCENARIOS = Path(__file__).resolve().parent / "fixtures" / "nvml"
_PAIR_FUNCTIONS = ("nvmlDeviceGetTopologyCommonAncestor", "nvmlDeviceGetP2PStatus")


class FakeTime:
    """A clock that only moves when the probe sleeps."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def wall(self) -> float:
        return 1_767_225_600.0 + self.now  # 2026-01-01T00:00:00Z at start 0


@dataclass(frozen=True)
class Handle:
    gpu: int
    mig: int | None = None


def load_scenario(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def _error(name: str) -> BaseException:
    error: BaseException
    if name == "LibraryMismatch":  # what nvidia-ml-py's unversioned wrappers raise
        error = real.NVMLLibraryMismatchError("Unversioned function called ...")
    else:
        error = getattr(real, f"NVMLError_{name}")()
    return error


def _struct(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(
            **{k: v.encode() if k == "busId" else _struct(v) for k, v in value.items()}
        )
    if isinstance(value, list):
        return [_struct(v) for v in value]
    return value


class StandIn:
    """Looks like ``pynvml`` to the probe: the real NVMLError classes, fake functions."""

    NVMLError = real.NVMLError

    def __init__(self, scenario: dict[str, Any], clock: FakeTime | None = None) -> None:
        self.scenario = scenario
        self.clock = clock or FakeTime()
        self.calls: list[tuple[str, int]] = []
        self.counts: dict[tuple[Any, ...], int] = {}
        self.started_at: float | None = None
        self.registered: set[int] = set()
        self.delivered: set[int] = set()
        self.lost: set[int] = set()
        self.shutdown = False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("NVMLError_") or name == "NVMLLibraryMismatchError":
            return getattr(real, name)
        if not name.startswith("nvml") or not callable(getattr(real, name, None)):
            raise AttributeError(name)

        def function(*args: Any) -> Any:
            self.calls.append((name, len(args)))
            if name in self.scenario.get("missing_functions", ()):
                raise _error("FunctionNotFound")
            return self._call(name, args)

        return function

    @property
    def gpus(self) -> list[dict[str, Any]]:
        gpus: list[dict[str, Any]] = self.scenario["gpus"]
        return gpus

    def _elapsed(self) -> float:
        return 0.0 if self.started_at is None else self.clock.now - self.started_at

    # --- system functions ------------------------------------------------------------

    def _call(self, name: str, args: tuple[Any, ...]) -> Any:
        system = getattr(self, f"_sys_{name}", None)
        if system is not None:
            return system(*args)
        handle = args[0]
        if not isinstance(handle, Handle):
            raise TypeError(f"{name}: expected a device handle, got {handle!r}")
        self._check_lost(handle.gpu)
        if name in _PAIR_FUNCTIONS:
            other = args[1]
            self._check_lost(other.gpu)
            low, high = sorted((handle.gpu, other.gpu))
            table = self.scenario.get("pairs", {}).get(f"{low}-{high}", {})
            return self._resolve(table.get(name), (name, low, high), args[2:])
        table = self.gpus[handle.gpu]
        if handle.mig is not None:
            table = table["mig_devices"][handle.mig]
        return self._resolve(table.get(name), (name, handle, *args[1:]), args[1:])

    def _check_lost(self, gpu: int) -> None:
        lost_at = self.gpus[gpu].get("lost_at_s")
        if gpu in self.lost or (lost_at is not None and self._elapsed() >= lost_at):
            self.lost.add(gpu)
            raise _error("GpuIsLost")

    def _resolve(self, entry: Any, key: tuple[Any, ...], rest: tuple[Any, ...]) -> Any:
        if entry is None:
            raise _error("NotSupported")
        if isinstance(entry, dict) and "error" in entry:
            raise _error(entry["error"])
        if isinstance(entry, dict) and "by_arg" in entry:
            choice = entry["by_arg"].get(str(rest[0])) if rest else None
            return self._resolve(choice, key, rest[1:])
        if isinstance(entry, dict) and "series" in entry:
            count = self.counts.get(key, 0)
            self.counts[key] = count + 1
            series = entry["series"]
            return self._resolve(series[min(count, len(series) - 1)], key, rest)
        return _struct(entry)

    def _sys_nvmlInit(self) -> None:
        if "init_error" in self.scenario:
            raise _error(self.scenario["init_error"])
        self.started_at = self.clock.now

    def _sys_nvmlShutdown(self) -> None:
        self.shutdown = True

    def _sys_nvmlSystemGetDriverVersion(self) -> str:
        return str(self.scenario.get("driver_version", "550.127.05"))

    def _sys_nvmlSystemGetCudaDriverVersion(self) -> int:
        return int(self.scenario.get("cuda_driver_version", 12040))

    def _sys_nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def _sys_nvmlDeviceGetHandleByIndex(self, index: int) -> Handle:
        if not 0 <= index < len(self.gpus):
            raise _error("InvalidArgument")
        self._check_lost(index)
        return Handle(index)

    def _sys_nvmlDeviceGetMigDeviceHandleByIndex(self, parent: Handle, slot: int) -> Handle:
        self._check_lost(parent.gpu)
        devices = self.gpus[parent.gpu].get("mig_devices", [])
        if slot >= len(devices) or devices[slot] is None:
            raise _error("NotFound")
        return Handle(parent.gpu, slot)

    def _sys_nvmlDeviceGetMaxMigDeviceCount(self, parent: Handle) -> int:
        return len(self.gpus[parent.gpu].get("mig_devices", []))

    def _sys_nvmlSystemGetProcessName(self, pid: int) -> str:
        names = self.scenario.get("process_names", {})
        if str(pid) not in names:
            raise _error("NotFound")
        return str(names[str(pid)])

    def _sys_nvmlDeviceGetIndex(self, handle: Handle) -> int:
        return handle.gpu

    # --- the Xid event set -----------------------------------------------------------

    def _sys_nvmlEventSetCreate(self) -> object:
        if self.scenario.get("event_set_error"):
            raise _error(self.scenario["event_set_error"])
        return SimpleNamespace(kind="event set")

    def _sys_nvmlDeviceRegisterEvents(self, handle: Handle, types: int, event_set: Any) -> None:
        self._check_lost(handle.gpu)
        self.registered.add(handle.gpu)

    def _sys_nvmlEventSetWait(self, event_set: Any, timeout_ms: int) -> Any:
        for number, event in enumerate(self.scenario.get("events", [])):
            due = self._elapsed() >= event["at_s"]
            if due and number not in self.delivered and event["gpu"] in self.registered:
                self.delivered.add(number)
                return SimpleNamespace(
                    device=Handle(event["gpu"]),
                    eventType=real.nvmlEventTypeXidCriticalError,
                    eventData=event["xid"],
                    gpuInstanceId=0xFFFFFFFF,
                    computeInstanceId=0xFFFFFFFF,
                )
        raise _error("Timeout")

    def _sys_nvmlEventSetFree(self, event_set: Any) -> None:
        return None
