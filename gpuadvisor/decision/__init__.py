"""``gpuadvisor/decision/v1`` and every sentence in it: the schema, and the phrasing
that turns the engine's conclusions into findings, picks, a headline and rejections."""
