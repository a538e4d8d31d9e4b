"""Malformed files at every entry point that parses one: TOML and JSON documents
(profiles, overlays, rules, a template's runbook), captures (XML, CSV, Prometheus text,
host/v1 JSON, text), other encodings, binary data, nesting and numbers made to break
parsers, and XML entity attacks. Each is refused with exit 2 naming the file, and the
line where the parser knows it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .hostile_support import Cli, Inputs, make_inputs, run_refused


@pytest.fixture()
def inputs(tmp_path: Path) -> Inputs:
    return make_inputs(tmp_path)


#: Where a document goes: (argv, the file it was written to) for given bytes.
Place = Callable[[Inputs, bytes], tuple[list[str], Path]]


def _profile(i: Inputs, data: bytes) -> tuple[list[str], Path]:
    path = i.write("bad-profile.toml", data)
    return ["advise", str(path)], path


def _ask_from(i: Inputs, data: bytes) -> tuple[list[str], Path]:
    path = i.write("bad-start.toml", data)
    return ["ask", "--from", str(path)], path


def _catalog_entry(i: Inputs, data: bytes) -> tuple[list[str], Path]:
    path = i.write("catalog-overlay/bad.toml", data)
    return ["advise", str(i.profile), "--catalog", str(i.catalog)], path


def _catalog_meta(i: Inputs, data: bytes) -> tuple[list[str], Path]:
    path = i.write("catalog-overlay/_catalog.toml", data)
    return ["catalog", "list", "--catalog", str(i.catalog)], path


def _rules_overlay(i: Inputs, data: bytes) -> tuple[list[str], Path]:
    path = i.write("rules-overlay/JOBS-001.toml", data)
    return ["advise", str(i.profile), "--rules", str(i.rules)], path


def _rules_lint(i: Inputs, data: bytes) -> tuple[list[str], Path]:
    path = i.write("rules-overlay/JOBS-001.toml", data)
    return ["rules", "lint", str(i.rules)], path


def _runbook(i: Inputs, data: bytes) -> tuple[list[str], Path]:
    path = i.write("templates/runbook.toml", data)
    return ["advise", str(i.profile), "--no-sensitivity", "--template", str(i.templates)], path


DOCUMENT_SLOTS: dict[str, Place] = {
    "advise PROFILE": _profile,
    "ask --from": _ask_from,
    "catalog overlay entry": _catalog_entry,
    "catalog overlay _catalog.toml": _catalog_meta,
    "rules overlay": _rules_overlay,
    "rules lint DIR": _rules_lint,
    "template runbook.toml": _runbook,
}

#: name -> (bytes, fragments of which one must appear, the line the message names).
DOCUMENTS: dict[str, tuple[bytes, tuple[str, ...], int | None]] = {
    "toml-unclosed-table": (b"a = 1\n[workload\nkind = 1\n", ("invalid TOML",), 2),
    "toml-unterminated-string": (b'a = 1\nb = "open\n', ("invalid TOML",), 2),
    "toml-ends-mid-value": (b"a = 1\nb = ", ("invalid TOML",), 2),
    "toml-duplicate-key": (b"a = 1\na = 2\n", ("invalid TOML",), 2),
    "json-syntax": (b'{\n"a": \n', ("invalid JSON", "invalid TOML"), None),
    "json-duplicate-key": (
        b'{\n"workload": {},\n"workload": {}\n}\n',
        ("appears twice", "invalid TOML"),
        None,
    ),
    "json-nan": (b'{"a": NaN}', ("NaN", "invalid TOML"), None),
    "json-infinity": (b'{"a": -Infinity}', ("Infinity", "invalid TOML"), None),
    "latin-1": (b'a = 1\ntitle = "caf\xe9"\n', ("not valid UTF-8",), 2),
    "utf-16": ('a = "x"\n'.encode("utf-16"), ("binary", "UTF-8"), None),
    "binary": (bytes(range(256)) * 4, ("binary",), None),
    "nul-byte": (b"a = 1\n\x00\n", ("binary",), None),
    "only-blank": (b"  \n\n\t\n", ("empty", "invalid TOML", "required"), None),
    "deep-toml-array": (b"a = " + b"[" * 3000 + b"]" * 3000 + b"\n", ("nested",), None),
    "deep-inline-table": (b"a = " + b"{b = " * 600 + b"1" + b"}" * 600, ("nested",), None),
    "deep-json": (b'{"a":' * 5000 + b"1" + b"}" * 5000, ("nested", "invalid TOML"), None),
    "toml-5000-digit-integer": (b"a = 1\nb = " + b"9" * 5000 + b"\n", ("too many digits",), 2),
    "json-5000-digit-integer": (
        b'{"a":\n' + b"9" * 5000 + b"}",
        ("too many digits", "invalid TOML"),
        None,
    ),
    "json-lone-surrogate": (b'{"a": "\\ud800"}', ("surrogate", "invalid TOML"), None),
    "bom-then-garbage": ("\ufeff[x".encode(), ("invalid TOML",), 1),
}


@pytest.mark.parametrize("slot", DOCUMENT_SLOTS)
@pytest.mark.parametrize("case", DOCUMENTS)
def test_malformed_documents(cli: Cli, inputs: Inputs, slot: str, case: str) -> None:
    data, fragments, line = DOCUMENTS[case]
    args, path = DOCUMENT_SLOTS[slot](inputs, data)
    result = run_refused(cli, inputs, args, where=str(path))
    assert any(f in result.stderr for f in fragments), result.stderr
    if line is not None:
        assert f"{path}:{line}:" in result.stderr, result.stderr


# -- captures -----------------------------------------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [
  <!ENTITY lol "lol">
  <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<nvidia_smi_log><driver_version>&lol9;</driver_version></nvidia_smi_log>
"""

CAPTURES: dict[str, tuple[bytes, tuple[str, ...], int | None]] = {
    "xml-billion-laughs": (BILLION_LAUGHS, ("refused",), None),
    "xml-external-entity": (
        b'<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY s SYSTEM '
        b'"file:///etc/passwd">]>\n<nvidia_smi_log><driver_version>&s;</driver_version>'
        b"</nvidia_smi_log>\n",
        ("refused",),
        None,
    ),
    "xml-parameter-entity": (
        b'<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY % r SYSTEM '
        b'"http://example.invalid/x.dtd"> %r;]>\n<nvidia_smi_log></nvidia_smi_log>\n',
        ("refused",),
        None,
    ),
    "xml-unclosed": (
        b"<?xml version='1.0'?>\n<nvidia_smi_log>\n<gpu>\n</nvidia_smi_log>\n",
        ("invalid XML",),
        4,
    ),
    "xml-wrong-root": (
        b"<?xml version='1.0'?>\n<nvidia_smi_logx><gpu/></nvidia_smi_logx>\n",
        ("expected <nvidia_smi_log>", "unrecognised"),
        None,
    ),
    "csv-field-over-the-csv-limit": (
        b"index, name\n0, " + b"a" * 200_000 + b"\n",
        ("invalid CSV",),
        2,
    ),
    "csv-unterminated-quote": (b'index, name\n0, "' + b"a" * 200_000, ("invalid CSV",), None),
    "prometheus-broken-labels": (
        b'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1" 5\n',
        ("Prometheus",),
        None,
    ),
    "host-json-syntax": (b'{"schema": "gpuadvisor/host/v1", "gpus": [\n', ("invalid JSON",), 2),
    "host-json-duplicate-key": (
        b'{"schema": "gpuadvisor/host/v1",\n"gpus": [],\n"gpus": [{"index": 5}]}',
        ("appears twice",),
        3,
    ),
    "host-json-deep": (
        b'{"schema": "gpuadvisor/host/v1", "notes": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        ("nested",),
        None,
    ),
    "host-json-unknown-version": (
        b'{"schema": "gpuadvisor/host/v9", "gpus": []}',
        ("unrecognised evidence format",),
        None,
    ),
    "nvidia-smi-error-message": (
        b"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        ("error message from nvidia-smi",),
        None,
    ),
    "prose": (b"The GPU felt slow on Tuesday.\n", ("unrecognised evidence format",), None),
    "latin-1": ("Product Name : Café\n".encode("latin-1"), ("not valid UTF-8",), 1),
    # With its byte-order mark UTF-16 is read (PowerShell's ">"); without, it is binary.
    "utf-16-no-bom": ("GPU 0: A (UUID: GPU-1)\n".encode("utf-16-le"), ("binary",), None),
    "binary": (bytes(range(256)) * 8, ("binary",), None),
    "blank": (b"\n \n\t\n", ("empty",), None),
}


@pytest.mark.parametrize("command", ["advise --evidence", "import"])
@pytest.mark.parametrize("case", CAPTURES)
def test_malformed_captures(cli: Cli, inputs: Inputs, command: str, case: str) -> None:
    data, fragments, line = CAPTURES[case]
    path = inputs.write(f"capture-{case}", data)
    args = (
        ["advise", str(inputs.profile), "--evidence", str(path)]
        if command != "import"
        else ["import", str(inputs.evidence), str(path)]
    )
    result = run_refused(cli, inputs, args, where=str(path))
    assert any(f in result.stderr for f in fragments), result.stderr
    if line is not None:
        assert f"{path}:{line}:" in result.stderr, result.stderr


def test_external_entities_are_never_fetched(cli: Cli, inputs: Inputs) -> None:
    """The secret file's content must not appear anywhere, even in the message."""
    secret = inputs.write("secret.txt", "TOP-SECRET-VALUE\n")
    capture = inputs.write(
        "q.xml",
        f'<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY s SYSTEM "file://{secret}">]>'
        "\n<nvidia_smi_log><driver_version>&s;</driver_version></nvidia_smi_log>\n",
    )
    result = run_refused(cli, inputs, ["import", str(capture)], "refused")
    assert "TOP-SECRET" not in result.stderr + result.stdout
