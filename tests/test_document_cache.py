"""The per-user cache of parsed bundled documents: used only while files are unchanged,
never trusted past validation, never a reason for a run to fail, and data, not code."""

from __future__ import annotations

import datetime
import json
import math
import os
import pickle
import time
from collections.abc import Callable
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
    store = tmp_path / "documents.json"
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
    documents = DocumentCache(tmp_path / "documents.json")
    documents.get(doc, load_document)
    data, _ = documents.get(doc, load_document)
    data["t"]["x"].append(3)
    assert documents.get(doc, load_document)[0] == {"t": {"x": [1, 2]}}


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    documents = DocumentCache(tmp_path / "documents.json")
    assert documents.get(doc, load_document)[0] == {"x": 1}
    doc.write_text("x = 22\n")
    _old(doc)
    os.utime(doc, (time.time() - 30, time.time() - 30))
    assert documents.get(doc, load_document)[0] == {"x": 22}


def test_a_file_changed_moments_ago_is_not_cached(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    documents = DocumentCache(tmp_path / "documents.json")
    calls: list[Path] = []
    documents.get(doc, _counting(calls))
    documents.get(doc, _counting(calls))
    assert calls == [doc, doc]


def test_parse_errors_pass_through_and_are_not_cached(tmp_path: Path) -> None:
    doc = tmp_path / "bad.toml"
    doc.write_text("x = = 1\n")
    _old(doc)
    documents = DocumentCache(tmp_path / "documents.json")
    for _ in range(2):
        with pytest.raises(InputError, match=r"bad\.toml"):
            documents.get(doc, load_document)
    documents.flush()
    assert not (tmp_path / "documents.json").exists()


def _cache_file(entries: object, format: int = cache._FORMAT) -> bytes:
    """A cache file whose index holds ``entries`` and no entry texts."""
    return ("[" + json.dumps({"format": format, "entries": entries}) + "]").encode()


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not JSON",
        b"[",
        b"\xff\xfe[]",
        _cache_file({}, format=999),
        b"[1, 2, 3]",
        b'{"format": 2, "entries": {}}',
        pickle.dumps({"format": cache._FORMAT, "entries": {}}),
    ],
    ids=[
        "empty",
        "garbage",
        "cut-short",
        "not-ascii",
        "other-format",
        "not-an-index",
        "not-an-array",
        "a-pickle",
    ],
)
def test_a_damaged_cache_file_is_ignored_and_replaced(tmp_path: Path, content: bytes) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    store = tmp_path / "documents.json"
    store.write_bytes(content)
    documents = DocumentCache(store)
    assert documents.get(doc, load_document)[0] == {"x": 1}
    documents.flush()
    calls: list[Path] = []
    assert DocumentCache(store).get(doc, _counting(calls))[0] == {"x": 1}
    assert calls == []


def _garbage(entries: dict[str, tuple[cache.Stamp, str]], key: str) -> None:
    entries[key] = (entries[key][0], "\x80garbage")


def _cut_short(entries: dict[str, tuple[cache.Stamp, str]], key: str) -> None:
    entries[key] = (entries[key][0], entries[key][1][:-5])


def _another_files_entry(entries: dict[str, tuple[cache.Stamp, str]], key: str) -> None:
    other = json.loads(entries[key][1])
    other[0], other[1] = "/elsewhere/b.toml", {"x": 666}
    entries[key] = (entries[key][0], json.dumps(other))


def _a_date_where_none_is(entries: dict[str, tuple[cache.Stamp, str]], key: str) -> None:
    entry = json.loads(entries[key][1])
    entry[3] = [["date", "x"]]
    entries[key] = (entries[key][0], json.dumps(entry))


@pytest.mark.parametrize(
    "damage", [_garbage, _cut_short, _another_files_entry, _a_date_where_none_is]
)
def test_a_damaged_entry_is_parsed_again(
    tmp_path: Path, damage: Callable[[dict[str, tuple[cache.Stamp, str]], str], None]
) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    store = tmp_path / "documents.json"
    documents = DocumentCache(store)
    documents.get(doc, load_document)
    documents.flush()
    entries = cache._read_entries(store.read_bytes())
    damage(entries, str(doc))
    store.write_text(cache._cache_file_text(entries))
    calls: list[Path] = []
    assert DocumentCache(store).get(doc, _counting(calls))[0] == {"x": 1}
    assert calls == [doc]


def test_entries_are_found_by_their_place_in_the_file(tmp_path: Path) -> None:
    """The index points into the file; swapped places are seen, never mixed up."""
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text("x = 1\n")
    second.write_text("y = 2\n")
    _old(first)
    _old(second)
    store = tmp_path / "documents.json"
    documents = DocumentCache(store)
    documents.get(first, load_document)
    documents.get(second, load_document)
    documents.flush()
    assert not _parsed_again(first, store)
    assert not _parsed_again(second, store)
    index = json.loads(store.read_bytes())[0]
    places = index["entries"]
    a, b = places[str(first)], places[str(second)]
    a[1:], b[1:] = b[1:], a[1:]
    rest = store.read_text().split(",\n", 1)[1]
    store.write_text("[" + json.dumps(index, separators=(",", ":")) + ",\n" + rest)
    calls: list[Path] = []
    read = DocumentCache(store)
    assert read.get(first, _counting(calls))[0] == {"x": 1}
    assert read.get(second, _counting(calls))[0] == {"y": 2}
    assert calls == [first, second]


def test_an_unwritable_cache_folder_does_not_fail(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    documents = DocumentCache(tmp_path / "missing" / "folder" / "documents.json")
    assert documents.get(doc, load_document)[0] == {"x": 1}
    documents.flush()  # no error


def test_bundled_loads_fill_and_use_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "_DOCUMENTS", None)
    reference = (load_catalog(), load_rules())
    stores = list(tmp_path.glob("gpuadvisor/documents-*/documents-*.json"))
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
    entries = {
        str(rule): 5,
        "x": ["a", 0, 1],
        "short-stamp": [[1, 2, 3], 0, 1],
        "bool-stamp": [[True] * 6, 0, 1],
        "before-the-start": [list(range(6)), -1, 1],
        "empty": [list(range(6)), 0, 0],
        "float-place": [list(range(6)), 0.0, 1],
        "past-the-end": [list(range(6)), 10**6, 10],
    }
    store.write_bytes(_cache_file(entries))
    os.chmod(store, 0o600)
    monkeypatch.setattr(cache, "_DOCUMENTS", None)
    assert load_rules().rules
    # and the damaged file was replaced by a good one
    monkeypatch.setattr(cache, "_DOCUMENTS", None)
    assert str(rule) in cache._read_entries(store.read_bytes())


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
    doc, store = _cached_once(tmp_path, tmp_path / "documents.json")
    os.chmod(store, 0o666)
    assert _parsed_again(doc, store)


def test_a_link_in_place_of_the_cache_file_is_not_followed(tmp_path: Path) -> None:
    doc, real = _cached_once(tmp_path, tmp_path / "real.json")
    assert not _parsed_again(doc, real)
    link = tmp_path / "documents.json"
    link.symlink_to(real)
    assert _parsed_again(doc, link)


def test_a_rewrite_keeping_size_and_time_is_seen(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    documents = DocumentCache(tmp_path / "documents.json")
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


# Data, not code: the cache file is JSON, and what it gives back equals a parse.


def _same(a: object, b: object) -> bool:
    """Equal and of the same types throughout (1.0 is not 1, a date not a string)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, datetime.datetime | datetime.time) and isinstance(
        b, datetime.datetime | datetime.time
    ):
        return a == b and a.utcoffset() == b.utcoffset()
    return a == b


EVERY_KIND = """\
title = "caf\u00e9 \\"quoted\\" \\u00e9 \\n tab\\t"
multi = \"\"\"
two
lines\"\"\"
literal = 'C:\\path'
"" = "empty key"
"$date" = "a key like a tag"
"1" = 1
int = 7
negative = -3
big = 9_223_372_036_854_775_807
hex = 0xff
one = 1.0
zero = -0.0
small = 1e-300
huge = 1.5e300
up = inf
down = -inf
undefined = nan
yes = true
no = false
price_date = 2025-01-30
local = 2025-01-30T07:32:00.999999
utc = 1979-05-27T07:32:00Z
offset = 1979-05-27T00:32:00.5-07:00
india = 1979-05-27T00:32:00+05:30
alarm = 07:32:00
precise = 00:32:00.123456
empty = []
mixed = [1, 1.0, "1", true, 2025-01-30, [2025-01-31, [07:00:00]], {d = 2025-02-01}]
inline = { a = 1, b = { c = 2025-03-01 } }

[table]
"with.dot" = 1.0
date = 2025-04-01

[[skus]]
id = "a"
dates = [2025-01-01, 2025-01-02]

[[skus]]
id = "b"
[skus.price]
date = 2025-05-01
usd = 1.0
"""


def _cached_and_parsed(tmp_path: Path, text: str) -> tuple[object, object]:
    doc = tmp_path / "every.toml"
    doc.write_text(text)
    _old(doc)
    store = tmp_path / "documents.json"
    documents = DocumentCache(store)
    parsed = documents.get(doc, load_document)
    documents.flush()
    calls: list[Path] = []
    cached = DocumentCache(store).get(doc, _counting(calls))
    assert calls == []
    return cached, parsed


def test_a_cached_document_comes_back_exactly_as_parsed(tmp_path: Path) -> None:
    cached, parsed = _cached_and_parsed(tmp_path, EVERY_KIND)
    assert _same(cached, parsed)
    data = cached[0]  # type: ignore[index]
    assert type(data["one"]) is float
    assert type(data["price_date"]) is datetime.date
    assert type(data["local"]) is datetime.datetime and data["local"].tzinfo is None
    assert data["india"].utcoffset() == datetime.timedelta(hours=5, minutes=30)
    assert data["mixed"][5][1][0] == datetime.time(7)
    assert data["skus"][1]["price"]["date"] == datetime.date(2025, 5, 1)
    assert data["$date"] == "a key like a tag"


def test_the_bundled_documents_come_back_exactly_as_parsed(tmp_path: Path) -> None:
    paths = [p for folder in ("rules", "catalog") for p in sorted(data_dir(folder).rglob("*.toml"))]
    store = tmp_path / "documents.json"
    documents = DocumentCache(store)
    for path in paths:
        documents.get(path, load_document)
    documents.flush()
    cached = DocumentCache(store)
    kinds: set[type] = set()

    def walk(value: object) -> None:
        kinds.add(type(value))
        if isinstance(value, dict):
            value = list(value.values())
        for item in value if isinstance(value, list) else []:
            walk(item)

    for path in paths:
        document = cached.get(path, lambda p: pytest.fail(f"{p} parsed although cached"))
        assert _same(document, load_document(path)), path
        walk(document[0])
    # What the bundled files hold, dates included (the catalog's price_date).
    assert {dict, list, str, int, float, bool, datetime.date} <= kinds


def test_each_caller_gets_its_own_copy_of_nested_values_and_dates(tmp_path: Path) -> None:
    cached, _ = _cached_and_parsed(tmp_path, EVERY_KIND)
    store = tmp_path / "documents.json"
    doc = tmp_path / "every.toml"
    documents = DocumentCache(store)
    first = documents.get(doc, load_document)[0]
    first["skus"][0]["dates"].append(None)
    first["inline"]["b"].clear()
    first["mixed"][6]["d"] = "changed"
    second = documents.get(doc, load_document)[0]
    assert _same(second, cached[0])  # type: ignore[index]
    assert second["skus"][0]["dates"] is not first["skus"][0]["dates"]


def test_the_cache_file_is_json_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_unpickling(*_: object, **__: object) -> object:
        raise AssertionError("the cache unpickled something")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, no_unpickling)
    cached, parsed = _cached_and_parsed(tmp_path, EVERY_KIND)
    assert _same(cached, parsed)
    data = (tmp_path / "documents.json").read_bytes()
    assert data.isascii()
    assert not data.startswith(b"\x80")  # pickle's PROTO opcode; not in ASCII text at all
    stored = json.loads(data)
    index, entries = stored[0], stored[1:]
    assert index["format"] == cache._FORMAT
    assert [entry[0] for entry in entries] == [str(tmp_path / "every.toml")]
    assert entries[0][1]["price_date"] == "2025-01-30"  # ISO 8601, turned back on reading
    assert ["date", "price_date"] in entries[0][3]


def test_the_bundled_cache_is_named_as_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store_in(tmp_path, monkeypatch)
    assert store.name.startswith("documents-") and store.suffix == ".json"
    load_catalog()
    assert isinstance(json.loads(store.read_bytes()), list)


class _Planted:
    """Unpickling this would run code: it makes a folder."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (str(self.marker),))


def test_a_planted_pickle_is_never_unpickled(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    marker = tmp_path / "ran"
    store = tmp_path / "documents.json"
    planted = {"format": cache._FORMAT, "entries": {str(doc): [0, _Planted(marker)]}}
    store.write_bytes(pickle.dumps(planted))
    os.chmod(store, 0o600)
    pickle.loads(pickle.dumps(_Planted(tmp_path / "proof")))  # it would run, if unpickled
    assert (tmp_path / "proof").is_dir()
    documents = DocumentCache(store)
    calls: list[Path] = []
    assert documents.get(doc, _counting(calls))[0] == {"x": 1}
    assert calls == [doc]
    assert not marker.exists()
    documents.flush()  # and the planted file is replaced by the JSON cache
    assert json.loads(store.read_bytes())[0]["format"] == cache._FORMAT
    assert not marker.exists()


def test_a_document_json_cannot_hold_is_parsed_every_time(tmp_path: Path) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    _old(doc)
    store = tmp_path / "documents.json"
    odd = [{"pair": (1, 2)}, {"zone": datetime.datetime(2025, 1, 1, tzinfo=_Zone())}, {1: 2}]
    for data in odd:
        calls: list[Path] = []

        def parse(path: Path, data: dict[str, object] = data) -> tuple[dict[str, object], str]:
            calls.append(path)  # noqa: B023 - used at once
            return data, "x = 1\n"

        documents = DocumentCache(store)
        assert documents.get(doc, parse)[0] is data
        assert documents.get(doc, parse)[0] is data
        documents.flush()
        assert calls == [doc, doc]
        assert not store.exists()


class _Zone(datetime.tzinfo):
    """A time zone that is not a fixed offset (JSON's ISO text could not tell it)."""

    def utcoffset(self, dt: datetime.datetime | None) -> datetime.timedelta:
        return datetime.timedelta(hours=1)

    def dst(self, dt: datetime.datetime | None) -> datetime.timedelta:
        return datetime.timedelta(0)


def test_each_installation_keeps_its_own_cache_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two installs of one version (two virtualenvs, two checkouts) must not pile their
    entries into one file that every run then loads (it had grown to 17 MB)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GPUADVISOR_NO_CACHE", raising=False)
    files = set()
    for install in ("one", "two"):
        monkeypatch.setattr(cache, "data_dir", lambda name, i=install: tmp_path / i / name)
        store = bundled_documents().file
        assert store is not None
        files.add(store)
    assert len(files) == 2
