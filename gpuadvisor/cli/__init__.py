"""The command line: the only package that prints, prompts or exits.

Every command body is thin: parse options, call the pure modules, print or write the
result. :func:`main` maps the error family to exit codes in one place:
0 success, 2 invalid input, 1 internal error. No traceback reaches a user unless
``GPUADVISOR_DEBUG=1`` asks for it.

- :mod:`~gpuadvisor.cli.app`: the Typer applications, which command is built for a run,
  :func:`main` and its exit codes;
- :mod:`~gpuadvisor.cli.options`: option types and choices shared by several commands;
- :mod:`~gpuadvisor.cli.output`: writing a result to stdout or, atomically, to ``-o``;
- ``commands_*``: one module per group of commands (profile, evidence, rules, catalog,
  meta: schema and version).

"""

from __future__ import annotations

import os

# gpuadvisor uses no pydantic plugin; without this, the first model built scans every
# installed distribution's entry points for plugins, a large share of start-up time.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from gpuadvisor.cli.app import main

__all__ = ["main"]
