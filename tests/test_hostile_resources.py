"""No input can make gpuadvisor use unbounded memory or time.

- Size: every file a user or an organisation gives is read through ``textio`` with a
  size limit (16 MiB; 2 MiB for templates and assets), refused before it is parsed.
- Time: every regular expression in the evidence parsers is linear in the length of the
  line; the lines that made the old ones backtrack for minutes now read in
  milliseconds. Behind that, a parse deadline (``evidence._limits.PARSE_SECONDS``)
  stops any parser that runs long, naming the file and the line it had reached.
- Counts: more GPUs or topology devices than one host has are refused before pairwise
  work (merging, the topology matrix) can grow with their square.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.evidence import _limits, load_evidence, parse_text
from gpuadvisor.inputs.textio import MAX_INPUT_BYTES

from .hostile_support import Cli, Inputs, make_inputs, run_refused


@pytest.fixture()
def inputs(tmp_path: Path) -> Inputs:
    return make_inputs(tmp_path)


def _oversize(path: Path, size: int = MAX_INPUT_BYTES + 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)  # sparse: no disk or memory to speak of
    return path


#: Every reader: (where the oversize file goes, argv).
READERS: dict[str, Callable[[Inputs], tuple[Path, list[str]]]] = {
    "advise PROFILE": lambda i: (p := i.root / "big.toml", ["advise", str(p)]),
    "ask --from": lambda i: (p := i.root / "big.toml", ["ask", "--from", str(p)]),
    "advise --evidence": lambda i: (
        p := i.root / "big.log",
        ["advise", str(i.profile), "-e", str(p)],
    ),
    "import": lambda i: (p := i.root / "big.log", ["import", str(p)]),
    "catalog overlay entry": lambda i: (
        i.catalog / "big.toml",
        ["catalog", "list", "--catalog", str(i.catalog)],
    ),
    "catalog overlay _catalog.toml": lambda i: (
        i.catalog / "_catalog.toml",
        ["catalog", "list", "--catalog", str(i.catalog)],
    ),
    "rules overlay": lambda i: (
        i.rules / "JOBS-001.toml",
        ["advise", str(i.profile), "--rules", str(i.rules)],
    ),
    "rules lint DIR": lambda i: (i.rules / "JOBS-001.toml", ["rules", "lint", str(i.rules)]),
    "template": lambda i: (
        i.templates / "report.md.j2",
        ["advise", str(i.profile), "--no-sensitivity", "--template", str(i.templates)],
    ),
    "template runbook.toml": lambda i: (
        i.templates / "runbook.toml",
        ["advise", str(i.profile), "--no-sensitivity", "--template", str(i.templates)],
    ),
}


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_has_a_size_limit(cli: Cli, inputs: Inputs, reader: str) -> None:
    path, args = READERS[reader](inputs)
    _oversize(path)
    run_refused(cli, inputs, args, "limit", where=str(path))


# -- time: regular expressions and loops that used to grow faster than the input -----

SIZE = 2 * 1024 * 1024
Q = "==============NVSMI LOG==============\n"


def _fill(unit: str, prefix: str = "", suffix: str = "") -> str:
    return prefix + unit * ((SIZE - len(prefix) - len(suffix)) // len(unit)) + suffix


#: Inputs that took minutes to hours to parse (quadratic backtracking or pairwise work),
#: each a few MiB here.
ADVERSARIAL: dict[str, str] = {
    "smi-q-blank-run-in-a-value": _fill(" ", Q + "Driver Version : a", "b\n"),
    "smi-q-blank-run-without-colon": _fill(" ", Q + "a", "b\n"),
    "lscpu-blank-run-in-a-value": _fill(" ", "Architecture: x\nCPU(s): 4\nModel name: a", "b\n"),
    "numactl-blank-run": _fill(" ", "policy: default\nphyscpubind: 0\nmembind: a", "b\n"),
    "numactl-cpu-ranges": "policy: default\nphyscpubind: " + _fill("0-65535 ", "", "\n"),
    "smi-table-blank-run-in-a-name": _fill(
        " ", "NVIDIA-SMI 550\n|  GPU  Name   Persistence-M |\n|=====|\n|   0  a", "b  |  x | y |\n"
    ),
    "kernel-log-aer-without-closing-parenthesis": _fill("AER: Uncorrected (", "[ 1.0] ", "\n"),
    "kernel-log-aer-severity-without-comma": _fill("PCIe Bus Error: severity=", "[ 1.0] ", "\n"),
    "kernel-log-xid-bus-run": _fill("0", "[ 1.0] NVRM: Xid (", "\n"),
    "kernel-log-one-long-line": _fill("a ", "[ 1.0] ", "\n"),
    "ansi-escape-runs": _fill("\x1b[" + "0" * 50, "\tGPU0\tCPU Affinity\n"),
    "dcgm-long-label": 'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="' + _fill("a") + '"} 4\n',
    "csv-long-header-name": "index, " + _fill("a") + "\n0, 1\n",
}


@pytest.mark.parametrize("case", ADVERSARIAL)
def test_adversarial_lines_parse_in_linear_time(case: str) -> None:
    text = ADVERSARIAL[case]
    start = time.perf_counter()
    with contextlib.suppress(InputError):
        parse_text(text, "adversarial.txt")
    elapsed = time.perf_counter() - start
    # Linear: a few MiB read in well under a second; the old patterns took minutes.
    assert elapsed < 5, f"{case}: {elapsed:.1f} s"


def test_parse_deadline_names_the_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_limits, "PARSE_SECONDS", 0.0)
    path = tmp_path / "dmon.txt"
    path.write_text("# gpu pwr gtemp sm\n# Idx W C %\n" + "    0 100 50 5\n" * 10_000)
    with pytest.raises(InputError) as caught:
        load_evidence([path])
    error = caught.value
    assert "took longer than 0 s" in error.message
    assert error.file == str(path)
    assert error.line is not None and error.line > 1


def test_parse_deadline_through_the_cli(
    cli: Cli, inputs: Inputs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_limits, "PARSE_SECONDS", 0.0)
    path = inputs.write("xid.log", "[ 1.0] NVRM: Xid (PCI:0000:17:00): 79, pid=1\n" * 10_000)
    run_refused(cli, inputs, ["import", str(path)], "took longer", where=f"{path}:")


# -- counts -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "".join(f"GPU {i}: A (UUID: GPU-{i:08x})\n" for i in range(1100)),
        "index, temperature.gpu\n" + "".join(f"{i}, 40\n" for i in range(1100)),
        "".join(f'DCGM_FI_DEV_GPU_TEMP{{gpu="{i}",UUID="GPU-{i}"}} 4\n' for i in range(1100)),
        '<?xml version="1.0"?>\n<nvidia_smi_log>' + "<gpu/>" * 1100 + "</nvidia_smi_log>",
        '{"schema": "gpuadvisor/host/v1", "gpus": [' + ",".join(["{}"] * 1100) + "]}",
    ],
    ids=["smi-L", "query-csv", "dcgm", "xml", "host-json"],
)
def test_more_gpus_than_a_host_has_are_refused(text: str) -> None:
    with pytest.raises(InputError, match="GPUs in one host"):
        parse_text(text, "many.txt")


def test_merging_files_counts_gpus_too(tmp_path: Path) -> None:
    paths = []
    for part in range(3):
        path = tmp_path / f"L{part}.txt"
        path.write_text(
            "".join(f"GPU {i}: A (UUID: GPU-{part:02x}{i:06x})\n" for i in range(400)),
            encoding="utf-8",
        )
        paths.append(path)
    with pytest.raises(InputError, match="more than 1024 GPUs"):
        load_evidence(paths)


def test_topology_matrix_size_is_bounded() -> None:
    labels = [f"GPU{i}" for i in range(300)]
    text = "\t" + "\t".join(labels) + "\tCPU Affinity\n"
    text += "".join(f"{a}\t" + "\t".join(["SYS"] * len(labels)) + "\t0\n" for a in labels[:3])
    with pytest.raises(InputError, match="at most 256"):
        parse_text(text, "topo.txt")


def test_cpu_lists_are_bounded() -> None:
    snapshot = parse_text("policy: default\nphyscpubind: " + "0-65535 " * 100 + "\n", "n.txt")
    assert snapshot.host.numa_binding.physcpubind is None
