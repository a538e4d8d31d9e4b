"""Well-formed files holding values that are wrong: wrong types, NaN, infinities,
negative and absurd numbers, unknown keys (with a suggestion), unknown schema versions;
and command-line options of the same kinds. Each is refused with exit 2, naming the
file and the field (and the line where it can be found).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import REPO
from .hostile_support import PROFILE, RULE, Cli, Inputs, make_inputs, run_refused


@pytest.fixture()
def inputs(tmp_path: Path) -> Inputs:
    return make_inputs(tmp_path)


# -- profiles -----------------------------------------------------------------------

#: (text added to or replacing part of the profile, field, fragment, hint).
PROFILE_VALUES: dict[str, tuple[tuple[str, str], str, str, str | None]] = {
    "number-as-text": (
        ("vram_need_gib = 20", 'vram_need_gib = "20"'),
        "workload.vram_need_gib",
        "valid number",
        None,
    ),
    "number-as-boolean": (
        ("vram_need_gib = 20", "vram_need_gib = true"),
        "workload.vram_need_gib",
        "valid number",
        None,
    ),
    "nan": (
        ("vram_need_gib = 20", "vram_need_gib = nan"),
        "workload.vram_need_gib",
        "finite",
        None,
    ),
    "infinity": (
        ("vram_need_gib = 20", "vram_need_gib = -inf"),
        "workload.vram_need_gib",
        "finite",
        None,
    ),
    "negative": (
        ("vram_need_gib = 20", "vram_need_gib = -5"),
        "workload.vram_need_gib",
        "greater than or equal to 0.01",
        None,
    ),
    "denormal": (
        ("vram_need_gib = 20", "vram_need_gib = 5e-324"),
        "workload.vram_need_gib",
        "greater than or equal to 0.01",
        None,
    ),
    "absurd": (
        ("vram_need_gib = 20", "vram_need_gib = 1e308"),
        "workload.vram_need_gib",
        "less than or equal to 4096",
        None,
    ),
    "fractional-count": (
        ("vram_need_gib = 20", "vram_need_gib = 20\nconcurrent_jobs = 2.5"),
        "workload.concurrent_jobs",
        "integer",
        None,
    ),
    "huge-count": (
        ("vram_need_gib = 20", "vram_need_gib = 20\nconcurrent_jobs = 99999999999999999999"),
        "workload.concurrent_jobs",
        "less than or equal",
        None,
    ),
    "yes-as-text": (
        ("vram_need_gib = 20", 'vram_need_gib = 20\ninteractive = "yes"'),
        "workload.interactive",
        "valid boolean",
        None,
    ),
    "one-as-boolean": (
        ("vram_need_gib = 20", "vram_need_gib = 20\ninteractive = 1"),
        "workload.interactive",
        "valid boolean",
        None,
    ),
    "misspelt-choice": (
        ('kind = "inference"', 'kind = "inferense"'),
        "workload.kind",
        "inferense",
        "inference",
    ),
    "unknown-key": (
        ("vram_need_gib = 20", "vram_ned_gib = 20"),
        "workload.vram_ned_gib",
        "unknown key",
        "vram_need_gib",
    ),
    "unknown-section": (("[meta]", "[platfrom]\n[meta]"), "platfrom", "unknown key", "platform"),
    "unknown-schema-version": (
        ("profile/v1", "profile/v7"),
        "schema",
        "unsupported schema",
        "profile/v1",
    ),
    "schema-as-number": (('"gpuadvisor/profile/v1"', "1"), "schema", "unsupported schema", None),
    "title-not-text": (
        ('title = "Hostile input test"', "title = 3"),
        "meta.title",
        "valid string",
        None,
    ),
    "title-too-long": (
        ('title = "Hostile input test"', f'title = "{"x" * 300}"'),
        "meta.title",
        "at most 200",
        None,
    ),
    "apps-not-a-list": (
        ("[meta]", '[requirements]\nisv_apps = "Fluent"\n[meta]'),
        "requirements.isv_apps",
        "list of names",
        None,
    ),
    "too-many-apps": (
        ("[meta]", "[requirements]\nisv_apps = [" + ", ".join(['"a"'] * 51) + "]\n[meta]"),
        "requirements.isv_apps",
        "at most 50",
        None,
    ),
    "section-not-a-table": (
        ('[meta]\ntitle = "Hostile input test"\n', "meta = 5\n"),
        "meta",
        "valid dictionary",
        None,
    ),
}


@pytest.mark.parametrize("case", PROFILE_VALUES)
def test_wrong_profile_values(cli: Cli, inputs: Inputs, case: str) -> None:
    (old, new), field, fragment, hint = PROFILE_VALUES[case]
    assert old in PROFILE
    path = inputs.write("p.toml", PROFILE.replace(old, new, 1))
    result = run_refused(cli, inputs, ["advise", str(path)], fragment, where=f"{field}:")
    assert re.search(rf"{re.escape(str(path))}:\d+: {re.escape(field)}:", result.stderr), (
        "the message names the line",
        result.stderr,
    )
    if hint:
        assert f"did you mean '{hint}'" in result.stderr or hint in result.stderr


@pytest.mark.parametrize(
    "case", ["unknown-key", "unknown-section", "unknown-schema-version", "section-not-a-table"]
)
def test_ask_from_refuses_what_advise_refuses(cli: Cli, inputs: Inputs, case: str) -> None:
    (old, new), field, _, hint = PROFILE_VALUES[case]
    path = inputs.write("p.toml", PROFILE.replace(old, new, 1))
    result = run_refused(cli, inputs, ["ask", "--from", str(path)], where=field)
    if hint:
        assert hint in result.stderr


class _Answers:
    """Enter for every question but the one about memory, which gets 24."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def say(self, text: str) -> None:
        self.said.append(text)

    def ask(self, prompt: str) -> str:
        if len(self.said) > 10_000:
            raise AssertionError("the questionnaire does not end")
        question = next((t for t in reversed(self.said) if t and not t.startswith(" ")), "")
        return "24" if question.startswith("How much GPU memory") else ""


@pytest.mark.parametrize("case", ["number-as-text", "nan", "yes-as-text", "absurd"])
def test_ask_from_asks_again_for_a_wrong_value(inputs: Inputs, case: str) -> None:
    """A value ``advise`` would refuse is not taken over: it is named and asked again."""
    from gpuadvisor.ask import interview
    from gpuadvisor.inputs.textio import load_document

    (old, new), field, _, _ = PROFILE_VALUES[case]
    path = inputs.write("p.toml", PROFILE.replace(old, new, 1))
    document, text = load_document(path)
    dialogue = _Answers()
    profile = interview(dialogue, start=document, start_name=str(path), start_text=text)
    assert any(f"{path}: {field}: not accepted" in line for line in dialogue.said)
    assert profile.workload.vram_need_gib == (24 if "vram" in field else 20)


# -- catalog overlays ---------------------------------------------------------------

SKU = (REPO / "catalog" / "rtx-6000-ada.toml").read_text(encoding="utf-8")

CATALOG_VALUES: dict[str, tuple[str, str, str, str, str | None]] = {
    # name: (file name, (old, new) applied to the bundled entry or "" for a patch, ...)
    "number-as-text": (
        "rtx-6000-ada.toml",
        'vram_gib = 48.0|vram_gib = "48"',
        "vram_gib",
        "valid number",
        None,
    ),
    "nan": ("rtx-6000-ada.toml", "tdp_w = 300.0|tdp_w = nan", "tdp_w", "finite", None),
    "negative": (
        "rtx-6000-ada.toml",
        "tdp_w = 300.0|tdp_w = -300.0",
        "tdp_w",
        "greater than 0",
        None,
    ),
    "absurd": (
        "rtx-6000-ada.toml",
        "price_usd = 6799.0|price_usd = 1e300",
        "price_usd",
        "less than or equal",
        None,
    ),
    "yes-as-boolean": ("rtx-6000-ada.toml", 'ecc = true|ecc = "yes"', "ecc", "valid boolean", None),
    "unknown-key": (
        "rtx-6000-ada.toml",
        "vram_gib = 48.0|vram_gb = 48.0",
        "vram_gb",
        "unknown key",
        "vram_gib",
    ),
    "id-not-file-name": ("other-name.toml", "", "id", "differs from the file name", None),
    "http-source": (
        "rtx-6000-ada.toml",
        'sources = [\n  "https://www.grafikkarten|sources = [\n  "http://www.grafikkarten',
        "sources",
        "https://",
        None,
    ),
}


@pytest.mark.parametrize("case", CATALOG_VALUES)
def test_wrong_catalog_overlay_values(cli: Cli, inputs: Inputs, case: str) -> None:
    name, change, field, fragment, hint = CATALOG_VALUES[case]
    text = SKU
    if change:
        old, new = change.split("|")
        assert old in text
        text = text.replace(old, new, 1)
    path = inputs.write(f"catalog-overlay/{name}", text)
    args = ["catalog", "list", "--catalog", str(inputs.catalog)]
    result = run_refused(cli, inputs, args, fragment, where=str(path))
    assert f": {field}" in result.stderr
    if hint:
        assert hint in result.stderr


PATCHES: dict[str, tuple[str, str, str, str | None]] = {
    "patch-not-boolean": (
        'id = "rtx-6000-ada"\npatch = 1\nprice_usd = 1.0\n',
        "patch",
        "true or false",
        None,
    ),
    "patch-unknown-sku": (
        'id = "rtx-6000-adaa"\npatch = true\nprice_usd = 1.0\n',
        "id",
        "unknown SKU",
        "rtx-6000-ada",
    ),
    "patch-a-spec": (
        'id = "rtx-6000-ada"\npatch = true\nvram_gib = 96.0\n',
        "vram_gib",
        "a patch may change only",
        None,
    ),
    "patch-negative-price": (
        'id = "rtx-6000-ada"\npatch = true\nprice_usd = -1.0\n',
        "price_usd",
        "greater than 0",
        None,
    ),
    "patch-price-as-text": (
        'id = "rtx-6000-ada"\npatch = true\nprice_usd = "3900"\n',
        "price_usd",
        "valid number",
        None,
    ),
}


@pytest.mark.parametrize("case", PATCHES)
def test_wrong_catalog_patches(cli: Cli, inputs: Inputs, case: str) -> None:
    text, field, fragment, hint = PATCHES[case]
    path = inputs.write("catalog-overlay/price.toml", text)
    args = ["advise", str(inputs.profile), "--catalog", str(inputs.catalog)]
    result = run_refused(cli, inputs, args, fragment, where=f"{path}:")
    assert f": {field}:" in result.stderr
    if hint:
        assert hint in result.stderr


def test_catalog_overlay_meta_version_is_checked(cli: Cli, inputs: Inputs) -> None:
    path = inputs.write("catalog-overlay/_catalog.toml", 'version = 3\ndate = "yesterday"\n')
    run_refused(
        cli,
        inputs,
        ["catalog", "list", "--catalog", str(inputs.catalog)],
        "valid string",
        where=str(path),
    )


# -- rules overlays -----------------------------------------------------------------

RULE_VALUES: dict[str, tuple[str, str, str, str | None]] = {
    "weight-out-of-range": (
        '"two-independent-jobs" = 4|"two-independent-jobs" = 11',
        "effect",
        "-10..10",
        None,
    ),
    "unknown-severity": (
        'severity = "advice"|severity = "urgent"',
        "severity",
        "'info', 'advice', 'warning' or 'blocker'",
        None,
    ),
    "unknown-category": (
        'category = "topology"|category = "topologie"',
        "category",
        "'vram', 'sync'",
        None,
    ),
    "unknown-key": ("references = |referencs = ", "referencs", "unknown key", "references"),
    "unknown-fact": (
        "workload.jobs_per_host|workload.jobs_per_hots",
        "when",
        "unknown fact",
        "workload.jobs_per_host",
    ),
    "enum-literal-misspelt": (
        "when = \"|when = \"workload.kind == 'trainig' and ",
        "when",
        "trainig",
        "training",
    ),
    "wrong-type": ('when = "|when = "workload.kind > 3 and ', "when", "compares", None),
    "when-not-text": ('when = "|when = 5\n# "', "when", "valid string", None),
}


@pytest.mark.parametrize("case", RULE_VALUES)
def test_wrong_rule_overlay_values(cli: Cli, inputs: Inputs, case: str) -> None:
    change, field, fragment, hint = RULE_VALUES[case]
    old, new = change.split("|")
    assert old in RULE, old
    path = inputs.write("rules-overlay/JOBS-001.toml", RULE.replace(old, new, 1))
    for args in (
        ["advise", str(inputs.profile), "--rules", str(inputs.rules)],
        ["rules", "lint", str(inputs.rules)],
    ):
        result = run_refused(cli, inputs, args, fragment, where=str(path))
        assert field in result.stderr
        if hint:
            assert hint in result.stderr


def test_rule_id_must_match_its_file(cli: Cli, inputs: Inputs) -> None:
    path = inputs.write("rules-overlay/JOBS-002.toml", RULE)
    run_refused(
        cli,
        inputs,
        ["rules", "lint", str(inputs.rules)],
        "differs from the file name",
        where=str(path),
    )


# -- captures -----------------------------------------------------------------------

#: (capture text, fragment, where: field or line the message must name).
CAPTURE_VALUES: dict[str, tuple[str, str, str]] = {
    "csv-utilisation-250": ("index, utilization.gpu [%]\n0, 250 %\n", "out of range", "gpu_pct"),
    "csv-memory-1e400": ("index, memory.total [MiB]\n0, 1e400 MiB\n", "not a finite number", ":2:"),
    "csv-temperature-nan": ("index, temperature.gpu\n0, nan\n", "not a finite number", ":2:"),
    "csv-negative-memory": (
        "index, memory.total [MiB]\n0, -5 MiB\n",
        "greater than or equal",
        "memory_total_mib",
    ),
    "csv-index-5000-digits": (
        "index, temperature.gpu\n" + "9" * 5000 + ", 40\n",
        "not a finite number",
        ":2:",
    ),
    "smi-q-infinite-memory": (
        "==============NVSMI LOG==============\n\nDriver Version : 550.1\n"
        "GPU 00000000:17:00.0\n    FB Memory Usage\n        Total : 1e999 MiB\n",
        "not a finite number",
        ":6:",
    ),
    "smi-q-utilisation-abc": (
        "==============NVSMI LOG==============\n\nGPU 00000000:17:00.0\n    Utilization\n"
        "        Gpu : 101 %\n",
        "out of range",
        "gpu_pct",
    ),
    "dmon-infinite-power": (
        "# gpu pwr gtemp sm\n# Idx W C %\n    0 1e999 30 5\n",
        "not a finite number",
        ":3:",
    ),
    "dmon-absurd-power": (
        "# gpu pwr gtemp sm\n# Idx W C %\n    0 9e15 30 5\n",
        "beyond any real measurement",
        "power_w",
    ),
    "dcgm-nan-utilisation": (
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} NaN\n',
        "finite",
        "gpu_pct",
    ),
    "dcgm-infinite-memory": (
        'DCGM_FI_DEV_FB_TOTAL{gpu="0",UUID="GPU-1"} +Inf\n',
        "not a whole number",
        "DCGM_FI_DEV_FB_TOTAL",
    ),
    "xid-code-5000-digits": (
        "[ 1.0] NVRM: Xid (PCI:0000:17:00): " + "9" * 5000 + ", pid=1\n",
        "too large",
        ":1:",
    ),
    "smi-L-index-30-digits": ("GPU " + "9" * 30 + ": A (UUID: GPU-1)\n", "too large", ":1:"),
    "lscpu-zero-sockets": (
        "Architecture: x86_64\nCPU(s): 4\nSocket(s): 0\n",
        "greater than or equal to 1",
        "sockets",
    ),
    "lscpu-cpus-5000-digits": (
        "Architecture: x86_64\nCPU(s): " + "9" * 5000 + "\n",
        "not a finite number",
        ":2:",
    ),
    "iostat-nan-util": (
        "Linux 5.15 (h) \t01/01/2024 \t_x86_64_\t(8 CPU)\n\n"
        "Device r/s w/s %util\nnvme0n1 1 1 nan\n",
        "not a finite number",
        ":4:",
    ),
    "host-json-negative-index": (
        '{"schema": "gpuadvisor/host/v1",\n"gpus": [{"index": -1}]}',
        "greater than or equal",
        "gpus.0.index",
    ),
    "host-json-index-30-digits": (
        '{"schema": "gpuadvisor/host/v1", "gpus": [{"index": ' + "9" * 30 + "}]}",
        "not a measurement",
        "gpus.0.index",
    ),
    "host-json-absurd-sample": (
        '{"schema": "gpuadvisor/host/v1", "gpus": [{"index": 0, "samples": [{"power_w": 1e300}]}]}',
        "beyond any real measurement",
        "gpus.0.samples.0.power_w",
    ),
    "host-json-unknown-key": (
        '{"schema": "gpuadvisor/host/v1",\n"gpu": []}',
        "Extra inputs",
        "gpu",
    ),
    "host-json-index-as-list": (
        '{"schema": "gpuadvisor/host/v1", "gpus": [{"index": [0]}]}',
        "valid integer",
        "gpus.0.index",
    ),
}


@pytest.mark.parametrize("case", CAPTURE_VALUES)
def test_wrong_capture_values(cli: Cli, inputs: Inputs, case: str) -> None:
    text, fragment, where = CAPTURE_VALUES[case]
    path = inputs.write(f"capture-{case}.txt", text)
    for args in (["import", str(path)], ["advise", str(inputs.profile), "-e", str(path)]):
        result = run_refused(cli, inputs, args, fragment, where=str(path))
        assert where in result.stderr, result.stderr


def test_a_huge_topology_link_count_is_refused(cli: Cli, inputs: Inputs) -> None:
    text = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV" + "9" * 30 + "\t0\nGPU1\tNV4\t X \t0\n"
    path = inputs.write("topo.txt", text)
    run_refused(cli, inputs, ["import", str(path)], "too large", where=f"{path}:2:")


# -- command-line options -----------------------------------------------------------

OPTIONS: dict[str, tuple[list[str], str]] = {
    "min-vram-nan": (["catalog", "list", "--min-vram", "nan"], "--min-vram"),
    "max-price-inf": (["catalog", "list", "--max-price", "inf"], "--max-price"),
    "min-vram-text": (["catalog", "list", "--min-vram", "lots"], "--min-vram"),
    "unknown-segment": (["catalog", "list", "--segment", "gaming"], "--segment"),
    "unknown-format": (["catalog", "list", "--format", "xml"], "--format"),
    "unknown-option": (["catalog", "list", "--frobnicate"], "--frobnicate"),
    "example-outside-the-folder": (
        ["init", "--example", "../catalog/rtx-6000-ada"],
        "no worked example",
    ),
    "example-absolute": (["init", "--example", "/etc/hostname"], "no worked example"),
    "unknown-sku": (["catalog", "show", "rtx-6000-adaa"], "rtx-6000-ada"),
    "unknown-rule": (["rules", "explain", "VRAM-01"], "VRAM-001"),
    "unknown-schema": (["schema", "profiles"], "profiles"),
    "ask-format-without-advise": (["ask", "--format", "md"], "--advise"),
}


@pytest.mark.parametrize("case", OPTIONS)
def test_wrong_options(cli: Cli, inputs: Inputs, case: str) -> None:
    args, fragment = OPTIONS[case]
    run_refused(cli, inputs, args, fragment)


def test_pdf_needs_an_output_file(cli: Cli, inputs: Inputs) -> None:
    run_refused(cli, inputs, ["advise", str(inputs.profile), "--format", "pdf"], "-o FILE.pdf")


@pytest.mark.parametrize("epoch", ["yesterday", "1e9", "-99999999999999", "9" * 40])
def test_source_date_epoch_must_be_a_date(
    cli: Cli, inputs: Inputs, epoch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    run_refused(
        cli, inputs, ["advise", str(inputs.profile), "--no-sensitivity"], "SOURCE_DATE_EPOCH"
    )
