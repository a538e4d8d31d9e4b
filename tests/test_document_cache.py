"""The per-user cache of parsed bundled documents: used only while files are unchanged,
never trusted past validation, and never a reason for a run to fail."""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path

import pytest

from gpuadvisor.engine.rules import load_rules
from gpuadvisor.errors import InputError
from gpuadvisor.inputs import cache
from gpuadvisor.inputs.cache import DocumentCache, bundled_documents, user_cache_folder
from gpuadvisor.inputs.catalog import load_catalog
from gpuadvisor.inputs.textio import load_document
from gpuadvisor.resources import data_dir


def _old(path: Path) -> None:
    """Date a file back so it is settled enough to be cached."""
    then = time.time() - 60
    os.utime(path, (then, then))


def _counting(calls: list[Path]):  # type: ignore[no-untyped-def]
    def parse(path: Path) -> tuple[dict[str, object], str]:
        calls.append(path)
        return load_document(path)

    return parse


def test_second_read_comes_from_the_cache_file(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text('x = 1\nname = "a"\n')
    _old(doc)
    store = tmp_path / "documents.pickle"
    calls: list[Path] = []
    first = DocumentCache(store)
    assert first.get(doc, _counting(calls)) == ({"x": 1, "name": "a"}, 'x = 1\nname = "a"\n')
    first.flush()
    assert store.is_file()
    second = DocumentCache(store)  # a new process, in effect
    assert second.get(doc, _counting(calls))[0] == {"x": 1, "name": "a"}
    assert calls == [doc]


def test_each_caller_gets_its_own_copy(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("[t]\nx = [1, 2]\n")
    _old(doc)
    documents = DocumentCache(tmp_path / "documents.pickle")
    documents.get(doc, load_document)
    data, _ = documents.get(doc, load_document)
    data["t"]["x"].append(3)
    assert documents.get(doc, load_document)[0] == {"t": {"x": [1, 2]}}


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    documents = DocumentCache(tmp_path / "documents.pickle")
    assert documents.get(doc, load_document)[0] == {"x": 1}
    doc.write_text("x = 22\n")
    _old(doc)
    os.utime(doc, (time.time() - 30, time.time() - 30))
    assert documents.get(doc, load_document)[0] == {"x": 22}


def test_a_file_changed_moments_ago_is_not_cached(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    documents = DocumentCache(tmp_path / "documents.pickle")
    calls: list[Path] = []
    documents.get(doc, _counting(calls))
    documents.get(doc, _counting(calls))
    assert calls == [doc, doc]


def test_parse_errors_pass_through_and_are_not_cached(tmp_path: Path) -> None:
    doc = tmp_path / "bad.toml"
    doc.write_text("x = = 1\n")
    _old(doc)
    documents = DocumentCache(tmp_path / "documents.pickle")
    for _ in range(2):
        with pytest.raises(InputError, match=r"bad\.toml"):
            documents.get(doc, load_document)
    documents.flush()
    assert not (tmp_path / "documents.pickle").exists()


@pytest.mark.parametrize(
    "content",
    [b"", b"not a pickle", pickle.dumps({"format": 999}), pickle.dumps([1, 2, 3])],
    ids=["empty", "garbage", "other-format", "not-a-dict"],
)
def test_a_damaged_cache_file_is_ignored_and_replaced(tmp_path: Path, content: bytes) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    store = tmp_path / "documents.pickle"
    store.write_bytes(content)
    documents = DocumentCache(store)
    assert documents.get(doc, load_document)[0] == {"x": 1}
    documents.flush()
    calls: list[Path] = []
    assert DocumentCache(store).get(doc, _counting(calls))[0] == {"x": 1}
    assert calls == []


def test_a_damaged_entry_is_parsed_again(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    store = tmp_path / "documents.pickle"
    documents = DocumentCache(store)
    documents.get(doc, load_document)
    documents.flush()
    stored = pickle.loads(store.read_bytes())
    stamp, _ = stored["entries"][str(doc)]
    stored["entries"][str(doc)] = (stamp, b"\x80garbage")
    store.write_bytes(pickle.dumps(stored))
    assert DocumentCache(store).get(doc, load_document)[0] == {"x": 1}


def test_an_unwritable_cache_folder_does_not_fail(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    documents = DocumentCache(tmp_path / "missing" / "folder" / "documents.pickle")
    assert documents.get(doc, load_document)[0] == {"x": 1}
    documents.flush()  # no error


def test_bundled_loads_fill_and_use_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "_DOCUMENTS", None)
    reference = (load_catalog(), load_rules())
    stores = list(tmp_path.glob("gpuadvisor/documents-*/documents.pickle"))
    assert len(stores) == 1
    # A new process: nothing is parsed, and the loaded catalog and rules are the same.
    monkeypatch.setattr(cache, "_DOCUMENTS", None)

    def no_parsing(*_: object, **__: object) -> object:
        raise AssertionError("parsed although cached")

    monkeypatch.setattr("gpuadvisor.inputs.textio.parse_document", no_parsing)
    catalog, rules = load_catalog(), load_rules()
    assert catalog.skus == reference[0].skus
    assert [r.data for r in rules.rules] == [r.data for r in reference[1].rules]


def test_switched_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("GPUADVISOR_NO_CACHE", "1")
    monkeypatch.setattr(cache, "_DOCUMENTS", None)
    assert bundled_documents().file is None
    load_catalog()
    assert not (tmp_path / "gpuadvisor").exists()


def test_no_cache_in_a_folder_others_can_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    folder = user_cache_folder("documents-test")
    assert folder is not None
    os.chmod(folder, 0o777)
    assert user_cache_folder("documents-test") is None


def _store_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "_DOCUMENTS", None)
    store = bundled_documents().file
    assert store is not None
    return store


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_a_named_pipe_in_place_of_the_cache_file_is_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store_in(tmp_path, monkeypatch)
    os.mkfifo(store)
    # Would block forever if the pipe were opened for reading the usual way.
    assert load_catalog().skus


def test_malformed_entries_are_dropped_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store_in(tmp_path, monkeypatch)
    rule = sorted(data_dir("rules").rglob("*.toml"))[0]
    entries = {str(rule): 5, "x": ("a", b""), 7: (tuple(range(6)), b"")}
    store.write_bytes(pickle.dumps({"format": cache._FORMAT, "entries": entries}))
    os.chmod(store, 0o600)
    monkeypatch.setattr(cache, "_DOCUMENTS", None)
    assert load_rules().rules
    # and the damaged file was replaced by a good one
    monkeypatch.setattr(cache, "_DOCUMENTS", None)
    assert str(rule) in cache._valid_entries(pickle.loads(store.read_bytes()))


def _cached_once(tmp_path: Path, store: Path) -> tuple[Path, Path]:
    """A settled document, parsed once through a cache written to ``store``."""
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    documents = DocumentCache(store)
    documents.get(doc, load_document)
    documents.flush()
    return doc, store


def _parsed_again(doc: Path, store: Path) -> bool:
    """Whether a new process reading ``store`` has to parse ``doc`` again."""
    calls: list[Path] = []
    DocumentCache(store).get(doc, _counting(calls))
    return calls == [doc]


def test_a_cache_file_others_can_write_is_not_read(tmp_path: Path) -> None:
    doc, store = _cached_once(tmp_path, tmp_path / "documents.pickle")
    os.chmod(store, 0o666)
    assert _parsed_again(doc, store)


def test_a_link_in_place_of_the_cache_file_is_not_followed(tmp_path: Path) -> None:
    doc, real = _cached_once(tmp_path, tmp_path / "real.pickle")
    assert not _parsed_again(doc, real)
    link = tmp_path / "documents.pickle"
    link.symlink_to(real)
    assert _parsed_again(doc, link)


def test_a_rewrite_keeping_size_and_time_is_seen(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    documents = DocumentCache(tmp_path / "documents.pickle")
    assert documents.get(doc, load_document)[0] == {"x": 1}
    before = doc.stat()
    time.sleep(0.01)
    doc.write_text("x = 2\n")  # same size, then the old times put back (cp -p)
    os.utime(doc, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert documents.get(doc, load_document)[0] == {"x": 2}


def test_no_cache_without_file_owners(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    monkeypatch.delattr(os, "getuid")
    assert user_cache_folder("documents-test") is None


@pytest.mark.parametrize("setting", ["relative/cache", ""])
def test_a_relative_cache_home_is_ignored(
    setting: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", setting)
    monkeypatch.setenv("HOME", "relative-home")
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    assert user_cache_folder("documents-test") is None
    assert list(tmp_path.iterdir()) == []
