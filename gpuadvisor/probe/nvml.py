"""The one gateway every NVML call of ``gpuadvisor probe`` goes through.

:class:`Nvml` wraps the ``pynvml`` module object (or a stand-in with the same names and
the real ``pynvml.NVMLError_*`` classes) and turns its errors into what the probe can
act on:

- ``NotSupported``, ``NotFound``, ``NoPermission``, ``FunctionNotFound`` (an older driver
  lacks the symbol; nvidia-ml-py's ``NVMLLibraryMismatchError`` says the same for its
  unversioned wrappers) and any other per-call NVML error: a :class:`NotAvailable` value that
  keeps the call and the reason, so the field becomes ``null`` with its reason recorded;
- ``GpuIsLost``: :class:`GpuLost`, which the caller turns into a health event for that
  GPU while sampling goes on for the others;
- ``LibraryNotFound``, ``DriverNotLoaded`` and the like: :class:`NvmlUnusable`, which
  ``probe`` reports as invalid input pointing to ``gpuadvisor import``.

This module never imports ``pynvml`` itself (``gpuadvisor.probe.sampler`` does, lazily). The
NVML constants below are the ABI values from ``nvml.h``; they are spelled out here
rather than read from the module because nvidia-ml-py defines some of them wrongly
(``NVML_P2P_CAPS_INDEX_READ`` is the tuple ``(0,)``), and a test pins them against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

# nvmlClockType_t
CLOCK_SM: Final = 1
CLOCK_MEM: Final = 2
# nvmlTemperatureSensors_t / nvmlTemperatureThresholds_t
TEMPERATURE_GPU: Final = 0
THRESHOLD_SHUTDOWN: Final = 0
THRESHOLD_SLOWDOWN: Final = 1
THRESHOLD_GPU_MAX: Final = 3
# nvmlMemoryErrorType_t / nvmlEccCounterType_t
ERROR_CORRECTED: Final = 0
ERROR_UNCORRECTED: Final = 1
COUNTER_VOLATILE: Final = 0
COUNTER_AGGREGATE: Final = 1
# nvmlPageRetirementCause_t
RETIRED_MULTIPLE_SINGLE_BIT: Final = 0
RETIRED_DOUBLE_BIT: Final = 1
# nvmlPcieUtilCounter_t
PCIE_TX_BYTES: Final = 0
PCIE_RX_BYTES: Final = 1
# nvmlEnableState_t
FEATURE_ENABLED: Final = 1
# nvmlAffinityScope_t
AFFINITY_SCOPE_NODE: Final = 0
# nvmlGpuP2PCapsIndex_t: READ is what CUDA peer access over PCIe or NVLink needs.
P2P_CAPS_INDEX_READ: Final = 0
# nvmlEventType
EVENT_XID_CRITICAL_ERROR: Final = 0x8
#: NVML_NVLINK_MAX_LINKS (nvml.h of CUDA 13). Links are numbered from 0 without gaps;
#: the first link a GPU lacks answers NotSupported or InvalidArgument.
NVLINK_MAX_LINKS: Final = 36
#: NVML_VALUE_NOT_AVAILABLE for 32-bit ids (MIG instance ids outside MIG mode).
VALUE_NOT_AVAILABLE_UINT: Final = 0xFFFFFFFF

_UNAVAILABLE = ("NotSupported", "NotFound", "NoPermission", "FunctionNotFound")
_UNUSABLE = (
    "LibraryNotFound",
    "DriverNotLoaded",
    "LibRmVersionMismatch",
    "Uninitialized",
)


@dataclass(frozen=True)
class NotAvailable:
    """An NVML value that could not be read, and why.

    ``error`` is the NVML error's name (``NotSupported``, ``NoPermission``, ...), or
    ``Missing`` when nvidia-ml-py lacks the function.
    """

    call: str
    reason: str
    error: str = "Missing"

    @property
    def not_supported(self) -> bool:
        """The GPU lacks the feature (nvidia-smi prints N/A)."""
        return self.error == "NotSupported"

    @property
    def permanent(self) -> bool:
        """Asking again during this probe will not change the answer."""
        return self.error in (*_UNAVAILABLE, "Missing")

    def __str__(self) -> str:
        return f"{self.call}: {self.reason}"


class GpuLost(Exception):
    """NVML answered NVML_ERROR_GPU_IS_LOST: the GPU fell off the bus or hung."""

    def __init__(self, call: str) -> None:
        super().__init__(f"{call}: GPU is lost")
        self.call = call


class NvmlUnusable(Exception):
    """NVML itself cannot run here: no library, no driver, or a driver/library mismatch.
    ``error`` is the NVML error's name (``LibraryNotFound``, ``DriverNotLoaded``, ...)."""

    def __init__(self, call: str, reason: str, error: str) -> None:
        super().__init__(f"{call}: {reason}")
        self.call = call
        self.reason = reason
        self.error = error


class Nvml:
    """The gateway: ``call(name, *args)`` runs ``module.name(*args)``.

    Returns the value, or :class:`NotAvailable`; raises :class:`GpuLost` or
    :class:`NvmlUnusable`. Exceptions that are not NVML errors are bugs and pass through.
    ``calls`` counts the calls made, for the benchmark.
    """

    def __init__(self, module: Any) -> None:
        self._module = module
        self._base: type[BaseException] = module.NVMLError
        self._lost: type[BaseException] = module.NVMLError_GpuIsLost
        self._unusable = tuple(getattr(module, f"NVMLError_{n}") for n in _UNUSABLE)
        # nvidia-ml-py raises this (not an NVMLError) when an unversioned wrapper finds
        # only an older symbol in the driver's library: the function is not there.
        self._mismatch: type[BaseException] = getattr(
            module, "NVMLLibraryMismatchError", _NeverRaised
        )
        self.calls = 0

    def call(self, name: str, *args: Any) -> Any:
        """The value NVML returned, or NotAvailable (see the class docstring)."""
        function = getattr(self._module, name, None)
        if function is None:
            return NotAvailable(name, "not in this nvidia-ml-py version")
        self.calls += 1
        try:
            return function(*args)
        except self._lost:
            raise GpuLost(name) from None
        except self._unusable as exc:
            raise NvmlUnusable(name, _describe(exc), _error_name(exc)) from None
        except self._base as exc:
            return NotAvailable(name, _describe(exc), _error_name(exc))
        except self._mismatch:
            return NotAvailable(name, "Function Not Found (older driver)", "FunctionNotFound")

    def first(self, *names: str, args: tuple[Any, ...] = ()) -> Any:
        """The first of several equivalent calls that answers (a newer symbol, then the
        one older drivers export); NotAvailable from the last when none does."""
        result: Any = NotAvailable(names[-1], "not called")
        for name in names:
            result = self.call(name, *args)
            if not isinstance(result, NotAvailable):
                return result
        return result


class _NeverRaised(Exception):
    """Stands in for an exception class a bindings module does not define."""


def _describe(exc: BaseException) -> str:
    """NVML's own text for the error: "Not Supported", "Insufficient Permissions", ..."""
    return str(exc) or _error_name(exc)


def _error_name(exc: BaseException) -> str:
    return type(exc).__name__.removeprefix("NVMLError_")
