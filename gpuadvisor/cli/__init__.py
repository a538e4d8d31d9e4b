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

Importing this package changes nothing outside it (not even ``os.environ``): what only
the program should do is done by :mod:`gpuadvisor.launch`.
"""

from __future__ import annotations

from gpuadvisor.cli.app import main, preload

__all__ = ["main", "preload"]
