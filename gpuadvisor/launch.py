"""The ``gpuadvisor`` program's entry point: :func:`gpuadvisor.cli.main`, with Python's
cycle collector set for a short-lived process.

A run imports a large, long-lived object graph (pydantic's validators, Typer's
commands, Jinja2) and then builds a decision and a report. The collector would scan
that graph again and again and once more at exit, for garbage that is not there: about
a tenth of a short run's time. So imports run without it (the command's own modules
too: :func:`gpuadvisor.cli.preload` imports them first); what they made is frozen
(never scanned again); the command runs with the collector on, scanning only what it
allocates, less often than the default; and at the end everything is frozen, so exit
does not scan it either.

gpuadvisor uses no pydantic plugin; unless told so, the first model built scans every
installed distribution's entry points for plugins, a large share of start-up time. So
the program sets ``PYDANTIC_DISABLE_PLUGINS`` (unless it is already set) before pydantic
first looks at it.

Programs that import gpuadvisor as a library are unaffected: only this entry point (the
console script and ``python -m gpuadvisor``) does this.
"""

from __future__ import annotations

import gc
import os
import sys

#: Allocations between two young-generation collections during a run (Python's
#: default is 700): a run allocates in bursts, and its inputs are bounded in size.
YOUNG_THRESHOLD = 50_000


def settle_collector() -> None:
    """The collector as a ``gpuadvisor`` process runs after its imports (and the web
    page while it serves): what exists now frozen, never scanned again, and young
    collections every :data:`YOUNG_THRESHOLD` allocations. ``benchmarks/run.py``
    measures in-process decisions under it too, beside the default's figure."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    gc.enable()


def run() -> None:
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    gc.disable()
    from gpuadvisor.cli import main, preload

    preload(sys.argv[1:])
    settle_collector()
    try:
        main()
    finally:
        gc.freeze()
