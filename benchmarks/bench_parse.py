"""Parse time of 8-GPU nvidia-smi captures: ``-q`` text and ``-q -x`` XML.

Not a unit test. Run from the repository root::

    python benchmarks/bench_parse.py [--repeat 50]

The text capture is a real 8x H100 ``nvidia-smi -q``; no real 8-GPU XML capture is at
hand, so the XML is a real dual RTX A5000 report (driver 590, DTD v13, the largest
per-GPU block) with its first ``<gpu>`` element repeated eight times under distinct bus
ids. Each figure is the best of ``--repeat`` runs of detection + parsing, on one core.
Target: under 20 ms each.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuadvisor.engine.hostfacts import derive_host_facts  # noqa: E402
from gpuadvisor.evidence import parse_text  # noqa: E402

TARGET_MS = 20.0
TEXT = "smi-text/8x-h100-80gb-hbm3_535.161.08_q.txt"
XML = "smi-xml/2x-rtx-a5000_590.44.01_v13.xml"


def real_fixtures() -> Path:
    for base in ROOT.parents:
        candidate = base / "shared" / "fixtures" / "real"
        if candidate.is_dir():
            return candidate
    sys.exit("real captures not found: expected ../shared/fixtures/real beside the repository")


def eight_gpu_xml(two_gpu: str) -> str:
    """The report with its <gpu> elements replaced by the first one, eight times, each
    with its own bus id."""
    start = two_gpu.index("<gpu id=")
    end = two_gpu.index("</gpu>", start) + len("</gpu>")
    block = two_gpu[start:end]
    bus = re.search(r"<pci_bus_id>([^<]+)</pci_bus_id>", block)
    assert bus is not None
    blocks = []
    for i in range(8):
        new_bus = f"00000000:{0x17 + 0x10 * i:02X}:00.0"
        blocks.append(block.replace(bus.group(1), new_bus))
    after_last = two_gpu.rindex("</gpu>") + len("</gpu>")
    body = two_gpu[:start] + "\n\t".join(blocks) + two_gpu[after_last:]
    return re.sub(r"<attached_gpus>\d+</attached_gpus>", "<attached_gpus>8</attached_gpus>", body)


def best_ms(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    real = real_fixtures()
    text = (real / TEXT).read_text()
    xml = eight_gpu_xml((real / XML).read_text())
    failed = False
    for label, content in (("nvidia-smi -q (8 GPUs)", text), ("nvidia-smi -q -x (8 GPUs)", xml)):
        snapshot = parse_text(content, label)
        assert len(snapshot.gpus) == 8, (label, len(snapshot.gpus))
        parse = best_ms(partial(parse_text, content, label), args.repeat)
        facts = best_ms(partial(derive_host_facts, snapshot), args.repeat)
        verdict = "ok" if parse < TARGET_MS else f"SLOWER than {TARGET_MS:.0f} ms"
        print(
            f"{label:28} {len(content) / 1024:6.1f} KiB  parse {parse:6.2f} ms  "
            f"facts {facts:5.2f} ms  (best of {args.repeat})  {verdict}"
        )
        failed |= parse >= TARGET_MS
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
