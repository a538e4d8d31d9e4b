"""``nvidia-smi -L``: one line per GPU (index, name, UUID) and per MIG device."""

from __future__ import annotations

import re

from gpuadvisor.evidence import _detect
from gpuadvisor.evidence._limits import check_gpus, lines
from gpuadvisor.host.schema import Gpu, HostSnapshot, MigDevice
from gpuadvisor.nvidia.values import whole

_GPU = re.compile(_detect.SMI_LIST_GPU)
_MIG = re.compile(_detect.SMI_LIST_MIG)


def parse(text: str, name: str) -> HostSnapshot:
    gpus: list[Gpu] = []
    migs: list[MigDevice] = []
    for line in lines(text):
        gpu = _GPU.match(line)
        mig = _MIG.match(line)
        if gpu:
            check_gpus(len(gpus) + 1)
            _flush(gpus, migs)
            migs = []
            gpus.append(
                Gpu(index=whole(gpu.group("index")), name=gpu.group("name"), uuid=gpu.group("uuid"))
            )
        elif mig and gpus:
            migs.append(
                MigDevice(
                    index=whole(mig.group("index")),
                    profile=mig.group("profile"),
                    uuid=mig.group("uuid"),
                )
            )
    _flush(gpus, migs)
    return HostSnapshot(gpus=gpus)


def _flush(gpus: list[Gpu], migs: list[MigDevice]) -> None:
    if gpus and migs:
        gpus[-1] = gpus[-1].model_copy(update={"mig_devices": list(migs)})
