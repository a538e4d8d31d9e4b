"""``gpuadvisor/host/v1``: the measured host, as evidence parsers and the live probe
write it and the engine's host facts read it."""
