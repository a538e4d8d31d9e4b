"""The live probe: NVML behind one gateway (``nvml``), per-GPU and link readers, the
host's /proc and /sys readers, and the sampler that writes host/v1."""
