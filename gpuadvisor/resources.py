"""Where the bundled data folders (rules, catalog, reports, examples) are.

In a wheel they travel inside the package as ``gpuadvisor/_data/<name>`` (see
pyproject's force-include); in a source checkout or an editable install they are the
folders at the repository root. Both are found through the same function.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from gpuadvisor.errors import InternalError

DATA_FOLDERS = ("rules", "catalog", "reports", "examples")


def data_dir(name: str) -> Path:
    if name not in DATA_FOLDERS:
        raise InternalError(f"unknown data folder {name!r}")
    packaged = Path(str(files("gpuadvisor"))) / "_data" / name
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parent.parent / name
    if source.is_dir():
        return source
    raise InternalError(
        f"the bundled '{name}' folder is missing; the installation is incomplete",
        hint="reinstall gpuadvisor (pip install --force-reinstall gpuadvisor)",
    )
