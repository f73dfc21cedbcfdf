"""`fetch_benchmark`: a pinned benchmark into a folder, from a local copy or a real HTTP server on 127.0.0.1 standing
in for raw.githubusercontent.com (never the internet); every file checked, nothing half-written ever left."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from apps_prompts import (
    BASE_URL_VARIABLE,
    SOURCE_RECORD,
    ChecksumMismatchError,
    FetchError,
    MissingSourceFileError,
    SourceUnreachableError,
    UnknownBenchmarkError,
    fetch_benchmark,
    get_benchmark,
    load_apps,
)
from tests.benchmark_sources import (
    TINY_FILES,
    BenchmarkServer,
    closed_port,
    make_repository,
    repo_files,
    tiny_benchmark,
)


@pytest.fixture
def clone(tmp_path) -> Path:
    return make_repository(tmp_path / "clone")


@pytest.fixture
def bench(clone):
    return tiny_benchmark(clone)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (relative path → bytes)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(parent: Path) -> list[str]:
    """Temporary folders a fetch left beside its destination."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def assert_fetched(bench, folder: Path) -> None:
    files = tree(folder)
    assert set(files) == {"alpha.yaml", "beta.yaml", "LICENSE", SOURCE_RECORD}
    assert files["alpha.yaml"] == TINY_FILES["examples/alpha.yaml"].encode()
    record = json.loads(files[SOURCE_RECORD])
    assert (record["benchmark"], record["repository"], record["commit"]) == ("tiny", "github.com/example/tiny", bench.commit)
    assert record["license"].startswith("MIT") and record["files"]["alpha.yaml"] == bench.files["examples/alpha.yaml"]
    assert [spec.id for spec in load_apps(folder).raise_for_errors()] == ["alpha", "beta"]


# --- from a local copy ------------------------------------------------------------------------------------------


def test_from_a_local_clone_every_file_lands_in_the_fetched_layout_with_its_source_record(bench, clone, tmp_path):
    report = fetch_benchmark(bench, to=tmp_path / "out", source=clone)
    assert report.fetched and report.files == 3 and report.source == str(clone)
    assert_fetched(bench, tmp_path / "out")
    assert leftovers(tmp_path) == []


def test_from_an_unpacked_archive_with_one_top_folder(bench, tmp_path):
    archive = tmp_path / "unpacked"
    make_repository(archive / f"tiny-{bench.commit}")  # what `tar xzf` of GitHub's archive gives
    fetch_benchmark(bench, to=tmp_path / "out", source=archive)
    assert_fetched(bench, tmp_path / "out")


def test_from_a_folder_in_the_fetched_layout_or_its_parent(bench, clone, tmp_path):
    fetch_benchmark(bench, to=tmp_path / "first", source=clone)
    fetch_benchmark(bench, to=tmp_path / "second", source=tmp_path / "first")  # a copy fetched before (ID.yaml)
    assert_fetched(bench, tmp_path / "second")
    shelf = tmp_path / "shelf"
    make_repository(shelf / "tiny-apps", {path.removeprefix("examples/"): text for path, text in TINY_FILES.items()})
    (shelf / "other").mkdir()  # a parent holding the copy among other folders (as a data folder does)
    fetch_benchmark(bench, to=tmp_path / "third", source=shelf)
    assert_fetched(bench, tmp_path / "third")


def test_a_file_missing_from_the_local_copy_is_named_and_nothing_is_written(bench, clone, tmp_path):
    (clone / "examples" / "beta.yaml").unlink()
    with pytest.raises(MissingSourceFileError, match=r"clone/examples/beta\.yaml: missing in --from") as caught:
        fetch_benchmark(bench, to=tmp_path / "out", source=clone)
    assert caught.value.path.endswith("examples/beta.yaml")
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_a_changed_file_in_the_local_copy_is_refused_and_the_old_copy_is_kept(bench, clone, tmp_path):
    fetch_benchmark(bench, to=tmp_path / "out", source=clone)
    before = tree(tmp_path / "out")
    (clone / "examples" / "beta.yaml").write_text("id: beta\ntitle: Beta, changed\nprompt: x\ntags: [tool]\n")
    with pytest.raises(ChecksumMismatchError, match=r"examples/beta\.yaml from .*beta\.yaml differs from tiny's pinned file"):
        fetch_benchmark(bench, to=tmp_path / "out", source=clone, force=True)
    assert tree(tmp_path / "out") == before and leftovers(tmp_path) == []


def test_a_local_folder_holding_two_copies_asks_for_one(bench, clone, tmp_path):
    shelf = tmp_path / "shelf"
    make_repository(shelf / "one")
    make_repository(shelf / "two")
    with pytest.raises(FetchError, match=r"several folders in it hold tiny's files \(one, two\): pass one of them"):
        fetch_benchmark(bench, to=tmp_path / "out", source=shelf)
    fetch_benchmark(bench, to=tmp_path / "out", source=shelf / "two")
    assert_fetched(bench, tmp_path / "out")


def test_a_local_source_that_is_not_there_or_holds_nothing_of_the_benchmark_says_so(bench, tmp_path):
    with pytest.raises(FetchError, match="no such folder"):
        fetch_benchmark(bench, to=tmp_path / "out", source=tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FetchError, match=r"none of tiny's files there \(expected e\.g\. .*empty/examples/alpha\.yaml"):
        fetch_benchmark(bench, to=tmp_path / "out", source=tmp_path / "empty")
    (tmp_path / "archive.tar.gz").write_bytes(b"\x1f\x8b")
    with pytest.raises(FetchError, match="is a file: unpack the archive"):
        fetch_benchmark(bench, to=tmp_path / "out", source=tmp_path / "archive.tar.gz")
    assert not (tmp_path / "out").exists()


# --- the destination ----------------------------------------------------------------------------------------------


def test_a_complete_folder_is_left_alone_and_force_fetches_it_again(bench, clone, tmp_path):
    with BenchmarkServer(repo_files(bench, clone)) as server:
        first = fetch_benchmark(bench, to=tmp_path / "out", base_url=server.url)
        again = fetch_benchmark(bench, to=tmp_path / "out", base_url=server.url)
        assert first.fetched and not again.fetched and again.files == 3
        assert sum(server.requests.values()) == 3  # the second call asked for nothing
        forced = fetch_benchmark(bench, to=tmp_path / "out", base_url=server.url, force=True)
        assert forced.fetched and sum(server.requests.values()) == 6
    assert_fetched(bench, tmp_path / "out")


def test_a_damaged_or_partial_folder_is_fetched_again(bench, clone, tmp_path):
    fetch_benchmark(bench, to=tmp_path / "out", source=clone)
    (tmp_path / "out" / "alpha.yaml").write_text("edited by hand")
    assert fetch_benchmark(bench, to=tmp_path / "out", source=clone).fetched
    assert_fetched(bench, tmp_path / "out")
    fetch_benchmark(bench, to=tmp_path / "some", source=clone, only=["alpha"])
    assert set(tree(tmp_path / "some")) == {"alpha.yaml", "LICENSE", SOURCE_RECORD}
    assert fetch_benchmark(bench, to=tmp_path / "some", source=clone).fetched  # all of it now: beta was missing
    assert not fetch_benchmark(bench, to=tmp_path / "some", source=clone, only=["beta"]).fetched  # a subset of what is there


def test_a_folder_that_is_not_a_fetched_copy_is_never_replaced(bench, clone, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    with pytest.raises(FetchError, match=r"mine is not empty and is not a copy of tiny .*choose another --to"):
        fetch_benchmark(bench, to=mine, source=clone)
    assert tree(mine) == {"notes.txt": b"my notes"}
    (tmp_path / "file").write_text("x")
    with pytest.raises(FetchError, match="is a file, not a folder"):
        fetch_benchmark(bench, to=tmp_path / "file", source=clone)
    with pytest.raises(FetchError, match=r"cannot write in .*file/inside: "):
        fetch_benchmark(bench, to=tmp_path / "file" / "inside" / "out", source=clone)
    (tmp_path / "empty").mkdir()
    fetch_benchmark(bench, to=tmp_path / "empty", source=clone)  # an empty folder is fine
    assert_fetched(bench, tmp_path / "empty")


def test_what_a_killed_fetch_left_is_removed_by_the_next_but_a_live_fetchs_folder_is_not(bench, clone, tmp_path):
    killed = tmp_path / ".out.fetching-dead1234"
    (killed / "alpha.yaml").parent.mkdir(parents=True)
    (killed / "alpha.yaml").write_text("half")
    long_ago = time.time() - 3600
    os.utime(killed, (long_ago, long_ago))
    live = tmp_path / ".out.fetching-live5678"  # another fetch, still writing
    live.mkdir()
    other = tmp_path / ".elsewhere.fetching-old0000"  # not this destination's
    other.mkdir()
    os.utime(other, (long_ago, long_ago))
    fetch_benchmark(bench, to=tmp_path / "out", source=clone)
    assert leftovers(tmp_path) == [".elsewhere.fetching-old0000", ".out.fetching-live5678"]
    assert_fetched(bench, tmp_path / "out")


def test_only_some_apps_and_unknown_ids_are_named(bench, clone, tmp_path):
    report = fetch_benchmark(bench, to=tmp_path / "out", source=clone, only=["beta"])
    assert report.files == 2 and report.only == ("beta",)
    assert set(tree(tmp_path / "out")) == {"beta.yaml", "LICENSE", SOURCE_RECORD}
    assert json.loads((tmp_path / "out" / SOURCE_RECORD).read_text())["only"] == ["beta"]
    assert fetch_benchmark(bench, to=tmp_path / "str", source=clone, only="alpha, beta").only == ("alpha", "beta")
    with pytest.raises(UnknownBenchmarkError, match=r"tiny has no app 'alhpa' \(did you mean alpha\?\)"):
        fetch_benchmark(bench, to=tmp_path / "other", source=clone, only=["alhpa"])
    assert not (tmp_path / "other").exists()


def test_an_unknown_benchmark_name_lists_the_known_ones(tmp_path):
    with pytest.raises(UnknownBenchmarkError, match=r"unknown benchmark 'aui_gym' \(known: aui-gym, gpt5-apps\)"):
        fetch_benchmark("aui_gym", to=tmp_path / "out")


# --- downloads ----------------------------------------------------------------------------------------------------


def test_download_from_a_server_standing_in_for_github(bench, clone, tmp_path):
    with BenchmarkServer(repo_files(bench, clone)) as server:
        report = fetch_benchmark(bench, to=tmp_path / "out", base_url=server.url)
    assert report.fetched and report.source == server.url and report.files == 3
    assert server.count("examples/alpha.yaml") == 1
    assert f"/example/tiny/{bench.commit}/examples/alpha.yaml" in server.requests
    assert_fetched(bench, tmp_path / "out")
    assert leftovers(tmp_path) == []


def test_the_base_url_setting_is_read_from_the_environment(bench, clone, tmp_path, monkeypatch):
    with BenchmarkServer(repo_files(bench, clone)) as server:
        monkeypatch.setenv(BASE_URL_VARIABLE, server.url)
        fetch_benchmark(bench, to=tmp_path / "out")
        assert server.count("LICENSE") == 1
    assert_fetched(bench, tmp_path / "out")


def test_a_connection_dropped_half_way_is_tried_again(bench, clone, tmp_path):
    with BenchmarkServer(repo_files(bench, clone)) as server:
        server.drop_first["examples/beta.yaml"] = 2  # the first two GETs close half-way; the third (the last allowed) works
        fetch_benchmark(bench, to=tmp_path / "out", base_url=server.url)
        assert server.count("examples/beta.yaml") == 3
    assert_fetched(bench, tmp_path / "out")


def test_a_connection_dropped_every_time_gives_up_naming_the_file_and_keeps_the_old_copy(bench, clone, tmp_path):
    fetch_benchmark(bench, to=tmp_path / "out", source=clone)
    before = tree(tmp_path / "out")
    with BenchmarkServer(repo_files(bench, clone)) as server:
        server.drop_first["examples/beta.yaml"] = 99
        started = time.monotonic()
        with pytest.raises(FetchError, match=r"examples/beta\.yaml: the connection closed after \d+ bytes, \d+ short on "
                                             r"each of 3 attempts; nothing written") as caught:
            fetch_benchmark(bench, to=tmp_path / "out", base_url=server.url, force=True)
        assert time.monotonic() - started < 15
        assert server.count("examples/beta.yaml") == 3  # bounded
    assert "\n" not in str(caught.value)
    assert tree(tmp_path / "out") == before and leftovers(tmp_path) == []


def test_a_changed_file_on_the_server_is_refused_named_and_nothing_is_left(bench, clone, tmp_path):
    with BenchmarkServer(repo_files(bench, clone)) as server:
        server.changed["examples/alpha.yaml"] = b"id: alpha\ntitle: Alpha\nprompt: Something else.\ntags: [tool]\n"
        with pytest.raises(ChecksumMismatchError, match=r"examples/alpha\.yaml from http://127\.0\.0\.1:\d+/example/tiny/"
                                                        r".*differs from tiny's pinned file") as caught:
            fetch_benchmark(bench, to=tmp_path / "out", base_url=server.url)
    assert caught.value.path == "examples/alpha.yaml"
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_a_file_the_server_does_not_have_is_named(bench, clone, tmp_path):
    files = repo_files(bench, clone)
    del files[f"/example/tiny/{bench.commit}/examples/beta.yaml"]
    with BenchmarkServer(files) as server, pytest.raises(MissingSourceFileError, match=r"examples/beta\.yaml: not found \(HTTP 404\)"):
        fetch_benchmark(bench, to=tmp_path / "out", base_url=server.url)
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_no_network_is_one_line_suggesting_a_local_copy(bench, tmp_path):
    base_url = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with pytest.raises(SourceUnreachableError) as caught:
        fetch_benchmark(bench, to=tmp_path / "out", base_url=base_url)
    assert time.monotonic() - started < 15
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"could not reach {base_url} (Connection refused)")
    assert "--from PATH" in message and "github.com/example/tiny" in message
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_a_base_url_that_is_not_http_is_refused(bench, tmp_path, monkeypatch):
    monkeypatch.setenv(BASE_URL_VARIABLE, "raw.githubusercontent.com")
    with pytest.raises(FetchError, match=r"base URL 'raw\.githubusercontent\.com' \(--base-url or \$AUI_BENCHMARK_BASE_URL\) "
                                         r"is not an http:// or https:// address"):
        fetch_benchmark(bench, to=tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --- the pinned benchmarks and the real files -----------------------------------------------------------------------


def test_the_pinned_benchmarks_have_52_apps_each_and_their_licences():
    for name, repository, commit, folder in (("aui-gym", "github.com/showlab/AUI", "a9b365371af9b651d66b185b6c30b035146465da", "examples/"),
                                             ("gpt5-apps", "github.com/openai/gpt-5-coding-examples", "77f6322723703941f0b884d1a1cb77c60aad5187", "apps/")):
        bench = get_benchmark(name)
        assert (bench.repository, bench.commit, bench.license, bench.strip) == (repository, commit, "MIT", folder)
        assert len(bench.app_ids()) == 52 and len(bench.files) == 53 and "LICENSE" in bench.files
    assert get_benchmark("aui-gym").app_ids() == get_benchmark("gpt5-apps").app_ids()
    assert get_benchmark("aui-gym").destination("examples/pomodoro.yaml") == "pomodoro.yaml"
    assert get_benchmark("gpt5-apps").destination("apps/pomodoro/index.html") == "pomodoro/index.html"


def test_the_pinned_sums_are_those_of_the_shared_data_sources(shared_data):
    sources = json.loads((shared_data / "sources.json").read_text())
    for name in ("aui-gym", "gpt5-apps"):
        bench = get_benchmark(name)
        assert dict(bench.files) == sources[name]["files"] and bench.commit == sources[name]["commit"]


def test_aui_gym_fetched_from_the_shared_data_dev_copies_loads_52_apps(shared_data, tmp_path):
    bench = get_benchmark("aui-gym")
    clone = tmp_path / "AUI"  # the repository's layout, made of links to the development copies
    for path in bench.files:
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).symlink_to(shared_data / "aui-gym-apps" / bench.destination(path))
    report = fetch_benchmark("aui-gym", to=tmp_path / "aui-gym", source=clone)
    assert report.files == 53 and not (tmp_path / "aui-gym" / "examples").exists()
    assert not any(p.is_symlink() for p in (tmp_path / "aui-gym").iterdir())  # copies, not links
    assert len(load_apps(tmp_path / "aui-gym").raise_for_errors()) == 52
    license_text = (tmp_path / "aui-gym" / "LICENSE").read_text()
    assert license_text.startswith("MIT License")
    assert not fetch_benchmark("aui-gym", to=tmp_path / "aui-gym", source=shared_data).fetched


def test_the_pinned_aui_gym_downloads_from_a_server_serving_the_shared_data(shared_data, tmp_path):
    bench = get_benchmark("aui-gym")
    files = repo_files(bench, shared_data / "aui-gym-apps", bench.destination)
    with BenchmarkServer(files) as server:
        report = fetch_benchmark("aui-gym", to=tmp_path / "aui-gym", base_url=server.url)
        assert sum(server.requests.values()) == 53
    assert report.fetched and report.files == 53
    assert len(load_apps(tmp_path / "aui-gym").raise_for_errors()) == 52
    for path, digest in bench.files.items():
        assert hashlib.sha256((tmp_path / "aui-gym" / bench.destination(path)).read_bytes()).hexdigest() == digest


def test_gpt5_apps_from_the_shared_data_need_only_for_the_12_there(shared_data, tmp_path):
    with pytest.raises(MissingSourceFileError, match=r"gpt5-apps/\S+/index\.html: missing in --from .* \(39 more"):
        fetch_benchmark("gpt5-apps", to=tmp_path / "gpt5-apps", source=shared_data / "gpt5-apps")
    there = sorted(p.parent.name for p in (shared_data / "gpt5-apps").glob("*/index.html"))
    report = fetch_benchmark("gpt5-apps", to=tmp_path / "gpt5-apps", source=shared_data / "gpt5-apps", only=there)
    assert report.files == 13
    assert sorted(p.parent.name for p in (tmp_path / "gpt5-apps").glob("*/index.html")) == there
