"""Report rendering, one module per output format.

:mod:`gpuadvisor.render.report` is the entry point; the modules here hold what differs between
formats (escaping, compiling) and what they share (the view of a Decision, the charts,
the sandboxed template environment).
"""

from __future__ import annotations

import re

# C0 controls but tab/newline/carriage return, DEL and C1 controls: no format shows them
# usefully, HTML calls them parse errors, and a terminal may obey them.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text with control characters shown as U+FFFD, so they are visible but inert."""
    return _CONTROLS.sub("\ufffd", text)
