"""Which Xid codes point at hardware, at the driver/firmware, or at the application.

The one place this classification lives. Based on NVIDIA's Xid catalogue (docs.nvidia.com
/deploy/xid-errors) and its "possible causes" columns; where NVIDIA lists several causes,
the class is the one an operator should act on first, and the reason says why.
"""

from __future__ import annotations

from typing import Final

from gpuadvisor.host.schema import XidClass

#: code -> (class, reason). Codes not listed are "unknown" and count only towards the
#: total.
XID_CLASSES: Final[dict[int, tuple[XidClass, str]]] = {
    # The application: faults NVIDIA attributes first to user code (bad address,
    # illegal instruction, a channel torn down after the app's own error). The GPU keeps
    # working for other processes; fix the program before suspecting the card.
    13: ("application", "graphics engine exception: out-of-range address, illegal instruction"),
    31: ("application", "GPU memory page fault: the program touched an unmapped address"),
    43: ("application", "GPU stopped processing a channel after the program's own fault"),
    45: ("application", "preemptive cleanup of a channel after earlier errors or a kill"),
    # The driver or its firmware: timeouts and internal errors of the kernel driver, GSP
    # (the GPU System Processor running the driver's firmware) or on-board
    # micro-controllers. Usually fixed by a driver branch change or a reset, not an RMA.
    8: ("driver", "GPU stopped processing: driver timeout, often with thermal or power trouble"),
    32: ("driver", "invalid or corrupted push buffer stream"),
    38: ("driver", "driver firmware error"),
    56: ("driver", "display engine error"),
    61: ("driver", "internal micro-controller breakpoint or warning (firmware)"),
    62: ("driver", "internal micro-controller halt (firmware); reset and update the driver"),
    69: ("driver", "graphics engine class error"),
    109: ("driver", "context switch timeout"),
    119: ("driver", "GSP RPC timeout: firmware did not answer the driver"),
    120: ("driver", "GSP error: firmware fault, cleared by reset; newer drivers fix many"),
    # Hardware: memory errors, the bus, interconnects. NVIDIA's guidance for these is to
    # drain the GPU, reset, and open an RMA when they repeat; no software change helps.
    48: ("hardware", "double-bit (uncorrectable) ECC error"),
    57: ("hardware", "error programming the video memory interface"),
    58: ("hardware", "unstable video memory interface"),
    63: ("hardware", "ECC page retirement or row remapping recorded"),
    64: ("hardware", "ECC page retirement or row remapping failed"),
    74: ("hardware", "NVLink error"),
    79: ("hardware", "GPU has fallen off the bus (PCIe link lost: power, riser, slot, card)"),
    92: ("hardware", "high single-bit ECC error rate"),
    94: ("hardware", "contained ECC error (uncorrectable, process killed, GPU usable)"),
    95: ("hardware", "uncontained ECC error (uncorrectable, GPU needs a reset)"),
    121: ("hardware", "C2C (chip-to-chip) link error"),
    140: ("hardware", "unrecovered ECC error"),
}

#: Groups the facts count (gpuadvisor.engine.hostfacts).
XID_BUS: Final = frozenset({79})
XID_ECC: Final = frozenset({48, 63, 64, 94, 95})
XID_NVLINK: Final = frozenset({74})
XID_GSP: Final = frozenset({119, 120})


def classify(code: int) -> XidClass:
    entry = XID_CLASSES.get(code)
    return entry[0] if entry else "unknown"
