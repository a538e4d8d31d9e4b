"""Wheel build hook: the decision path compiled to C with mypyc, or pure Python.

The modules a decision runs through (the engine and the phrasing: ``include`` in
``[tool.hatch.build.targets.wheel.hooks.custom]`` of pyproject.toml) are compiled with
mypyc by hatch-mypyc, the build hook Black's wheels are made with. They are the same
typed code (``mypy --strict`` clean), about a quarter fewer instructions per decision.

A wheel is compiled only when it can be: an editable install stays pure Python (the
sources you edit are the code that runs), ``GPUADVISOR_PURE_PYTHON=1`` asks for pure
Python, and a machine without a C compiler (or where mypyc fails) gets the pure-Python
wheel with a warning instead of a failed install. Both behave alike:
``tests/test_compiled.py`` holds the compiled package's decisions equal to the sources'.
The compiled files are removed from the source tree once the wheel holds them.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import hatch_mypyc.plugin


class CompiledWhenPossible(hatch_mypyc.plugin.MypycBuildHook):
    """hatch-mypyc's hook, skipped for editable installs and on request, and falling
    back to pure Python when compiling fails."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable" or os.environ.get("GPUADVISOR_PURE_PYTHON", "") not in ("", "0"):
            return
        # hatch-mypyc hides pyproject.toml while setuptools runs, so mypy would miss the
        # project's [tool.mypy]: what it needs to read the models is given here.
        with tempfile.TemporaryDirectory() as scratch:
            config = os.path.join(scratch, "mypy.ini")
            with open(config, "w", encoding="utf-8") as out:
                out.write("[mypy]\nplugins = pydantic.mypy\nignore_missing_imports = True\n")
            self.config["mypy-args"] = [
                *self.config.get("mypy-args", []),
                f"--config-file={config}",
            ]
            self._compile(version, build_data)

    def _compile(self, version: str, build_data: dict[str, Any]) -> None:
        try:
            super().initialize(version, build_data)
        except Exception as error:  # no compiler, no headers, a mypyc failure
            self.clean([version])
            self.app.display_warning(
                "gpuadvisor: the decision path could not be compiled with mypyc; "
                f"building the pure-Python wheel (same behaviour, slower):\n{error}"
            )

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        # The wheel holds the compiled modules now: none stays beside the sources,
        # where it would shadow the .py files a developer edits.
        if not build_data.get("pure_python", True):
            self.clean([version])


def get_build_hook() -> type[CompiledWhenPossible]:
    return CompiledWhenPossible
