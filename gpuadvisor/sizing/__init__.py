"""Sizing: from the model a profile names to the memory one job needs, and how fast it
can run on a card (``[workload.model]``, ``gpuadvisor size``, CONTRACT §6).

- :mod:`.tables`: the constants and the model table (``data/*.toml``, each value sourced);
- :mod:`.arch`: a transformer's shape and what follows from it (parameters, KV cache);
- :mod:`.hfconfig`: a local Hugging Face config.json, read as untrusted input, the way
  transformers builds its model_type (``data/architectures.toml``);
- :mod:`.estimate`: the memory terms (and which could not be computed); :mod:`.diffusion`:
  a diffusion pipeline's activations; :mod:`.speed`: decode and prefill bounds.

Arithmetic only: the decision (:mod:`gpuadvisor.decision.sizing`) writes the sentences.
:func:`size_model` is the one entry point that reads a file (the config.json).
"""

from __future__ import annotations

from pathlib import Path

from gpuadvisor.inputs.workload_model import Model
from gpuadvisor.sizing.estimate import GIB, MemoryEstimate, estimate_memory
from gpuadvisor.sizing.hfconfig import read_architecture, resolve_config_path
from gpuadvisor.sizing.speed import SpeedBound, speed_on

__all__ = ["GIB", "MemoryEstimate", "SpeedBound", "estimate_memory", "size_model", "speed_on"]


def size_model(model: Model, *, base_dir: Path | None = None) -> MemoryEstimate:
    """The memory estimate for ``model``, reading its ``hf_config`` (relative to
    ``base_dir``, the profile's folder) when it names one."""
    if model.hf_config is None:
        return estimate_memory(model)
    path = resolve_config_path(model.hf_config, base_dir)
    return estimate_memory(model, read_architecture(path), str(path))
