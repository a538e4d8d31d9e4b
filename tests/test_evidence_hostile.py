"""Input that must be refused cleanly: an InputError (exit code 2) naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.errors import InputError
from gpuadvisor.evidence import detect, load_evidence, parse_text
from gpuadvisor.inputs.textio import MAX_INPUT_BYTES

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [
  <!ENTITY lol "lol">
  <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<nvidia_smi_log><driver_version>&lol9;</driver_version></nvidia_smi_log>
"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<nvidia_smi_log><driver_version>&secret;</driver_version></nvidia_smi_log>
"""

PARAMETER_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [<!ENTITY % remote SYSTEM "http://example.invalid/x.dtd"> %remote;]>
<nvidia_smi_log></nvidia_smi_log>
"""


def _write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def _refused(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_evidence([path])
    error = caught.value
    assert error.exit_code == 2
    assert error.file == str(path)
    return error


@pytest.mark.parametrize(
    "text", [BILLION_LAUGHS, EXTERNAL_ENTITY, PARAMETER_ENTITY], ids=["laughs", "xxe", "pe"]
)
def test_entity_tricks_in_xml_are_refused(tmp_path: Path, text: str) -> None:
    error = _refused(_write(tmp_path, "q.xml", text))
    assert "refused" in error.message


def test_nvidia_smi_doctype_without_entities_is_fine() -> None:
    text = (
        '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n'
        "<nvidia_smi_log><driver_version>550.1</driver_version>"
        "<attached_gpus>0</attached_gpus></nvidia_smi_log>\n"
    )
    assert parse_text(text, "x.xml").driver_version == "550.1"


def test_broken_xml_names_the_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "q.xml", "<?xml version='1.0'?>\n<nvidia_smi_log>\n<gpu>\n</nvidia_smi_log>\n"
    )
    error = _refused(path)
    assert "invalid XML" in error.message
    assert error.line == 4


def test_other_xml_is_not_evidence(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, "x.xml", "<?xml version='1.0'?><html><body/></html>"))
    assert "unrecognised" in error.message


def test_binary_garbage_is_refused(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, "blob.bin", bytes(range(256)) * 8))
    assert "binary" in error.message


def test_invalid_utf8_is_refused(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, "latin1.txt", "Product Name : Café\n".encode("latin-1")))
    assert "UTF-8" in error.message


def test_oversize_file_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with path.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk, no memory to speak of
    error = _refused(path)
    assert "limit" in error.message


def test_empty_file_is_refused(tmp_path: Path) -> None:
    assert "empty" in _refused(_write(tmp_path, "empty.txt", "\n\n  \n")).message


def test_missing_file_and_directory(tmp_path: Path) -> None:
    assert "not found" in _refused(tmp_path / "nope.txt").message
    assert "directory" in _refused(tmp_path).message


def test_unrecognised_text_lists_the_accepted_formats(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, "notes.txt", "The GPU felt slow on Tuesday.\n"))
    assert "unrecognised evidence format" in error.message
    assert error.hint is not None
    for name in ("nvidia-smi -q -x", "topo -m", "journalctl -k", "iostat -x", "dcgm-exporter"):
        assert name in error.hint


@pytest.mark.parametrize(
    "text",
    [
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        "Failed to initialize NVML: Driver/library version mismatch\n",
        "No devices were found\n",
        "ERROR: Option -m is missing its value. Please run 'nvidia-smi -h' for help.\n",
    ],
)
def test_nvidia_smi_error_messages_are_named(tmp_path: Path, text: str) -> None:
    error = _refused(_write(tmp_path, "out.txt", text))
    assert "error message from nvidia-smi" in error.message


def test_detect_ignores_the_file_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "nvidia-smi-q.xml", "# gpu  pid  type  sm  mem  enc  dec  command\n")
    assert detect(path.read_text()) == "nvidia-smi-pmon"


def test_host_json_errors_name_the_field(tmp_path: Path) -> None:
    text = '{\n  "schema": "gpuadvisor/host/v1",\n  "gpus": [{"memory_total_mib": -5}]\n}\n'
    error = _refused(_write(tmp_path, "host.json", text))
    assert error.field == "gpus.0.memory_total_mib"


def test_host_json_unknown_keys_and_nan_are_refused(tmp_path: Path) -> None:
    unknown = '{"schema": "gpuadvisor/host/v1", "gpu": []}'
    assert _refused(_write(tmp_path, "a.json", unknown)).field == "gpu"
    nan = '{"schema": "gpuadvisor/host/v1", "gpus": [{"fan_pct": NaN}]}'
    assert "NaN" in _refused(_write(tmp_path, "b.json", nan)).message


def test_out_of_range_values_become_input_errors(tmp_path: Path) -> None:
    text = "index, utilization.gpu [%]\n0, 250 %\n"
    error = _refused(_write(tmp_path, "q.csv", text))
    assert "out of range" in error.message
    assert error.field is not None and "gpu_pct" in error.field


def test_broken_prometheus_text_is_refused(tmp_path: Path) -> None:
    text = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1" 5\n'
    assert "Prometheus" in _refused(_write(tmp_path, "scrape.prom", text)).message
