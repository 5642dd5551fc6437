"""Choosing a storage by URL, and the data server's configuration: explicit arguments, then
environment, then the config file, then defaults; bad values named."""

from __future__ import annotations

import pytest

from dataserver import (
    HTTPStorage,
    LocalStorage,
    S3Storage,
    ServerConfig,
    ServerConfigError,
    open_storage,
    parse_size,
)

TOKEN = "a-token-long-enough-1234"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for name in ("AWL_DATASERVER_STORAGE", "AWL_DATABASE_URL", "AWL_DATABASE_SCHEMA",
                 "AWL_DATASERVER_TOKENS", "AWL_DATASERVER_MAX_UPLOAD", "AWL_DATA_URL",
                 "AWL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def test_a_path_or_file_url_opens_a_local_directory(tmp_path):
    assert isinstance(open_storage(str(tmp_path / "a")), LocalStorage)
    storage = open_storage((tmp_path / "b").as_uri() + "?durability=each")
    assert isinstance(storage, LocalStorage) and storage.durability == "each"
    reopened = open_storage(storage.url)
    assert (reopened.root, reopened.durability) == (storage.root, "each")
    assert open_storage(str(tmp_path / "c")).durability == "commit"


def test_an_s3_url_opens_a_bucket_with_credentials_from_the_environment(s3_endpoint, s3_env):
    storage = open_storage(f"s3://cfg-bucket?endpoint={s3_endpoint}&secure=false"
                           "&part_size=6291456")
    assert isinstance(storage, S3Storage)
    assert (storage.bucket, storage.part_size) == ("cfg-bucket", 6291456)
    storage.put("x", b"x")
    assert open_storage(storage.url).stat("x").size == 1


def test_an_http_url_opens_a_data_server_client():
    storage = open_storage("http://127.0.0.1:1/", token=TOKEN)
    assert isinstance(storage, HTTPStorage) and storage.token == TOKEN


@pytest.mark.parametrize(("url", "complaint"), [
    ("ftp://host/dir", "unknown scheme 'ftp'"),
    ("s3://?endpoint=x:1", "names no bucket"),
    ("s3://bucket/some/prefix", "key prefix"),
    ("s3://bucket?endpoint=x:1&colour=blue", "unknown option colour"),
    ("s3://b?endpoint=x:1&part_size=1000", "at least 5 MiB"),
    ("s3://b?endpoint=x:1&part_size=big", "not a whole number"),
    ("./data?durability=maybe", "choose one of commit, each, none"),
    ("./data?fsync=true", "unknown option fsync"),
    ("", "empty"),
])
def test_bad_storage_urls_are_refused_naming_the_problem(url, complaint):
    with pytest.raises(ServerConfigError, match=complaint):
        open_storage(url)


def test_server_settings_come_from_arguments_before_environment_before_file(monkeypatch,
                                                                            tmp_path):
    (tmp_path / "awl.toml").write_text(
        'database_url = "sqlite:///top.db"\n'
        "[dataserver]\n"
        'storage = "/from/file"\n'
        f'tokens = ["{TOKEN}-file"]\n'
        'max_upload = "2G"\n'
    )
    config = ServerConfig.load()
    assert config.storage_url == "/from/file"
    assert config.tokens == (f"{TOKEN}-file",)
    assert config.max_upload_bytes == 2 * 1024**3
    assert config.database_url == "sqlite:///top.db"

    monkeypatch.setenv("AWL_DATASERVER_STORAGE", "/from/env")
    monkeypatch.setenv("AWL_DATASERVER_TOKENS", f"{TOKEN}-1, {TOKEN}-2")
    config = ServerConfig.load()
    assert config.storage_url == "/from/env"
    assert config.tokens == (f"{TOKEN}-1", f"{TOKEN}-2")

    config = ServerConfig.load(storage_url="/explicit", max_upload_bytes="512M")
    assert config.storage_url == "/explicit"
    assert config.max_upload_bytes == 512 * 1024**2


def test_server_defaults_are_safe():
    config = ServerConfig.load()
    assert config.storage_url == "./awl-data"
    assert config.tokens == ()  # read-only
    assert config.database_url is None  # deletes refused


def test_server_storage_falls_back_to_the_data_url_unless_it_is_http(monkeypatch):
    monkeypatch.setenv("AWL_DATA_URL", "/shared/data")
    assert ServerConfig.load().storage_url == "/shared/data"
    monkeypatch.setenv("AWL_DATA_URL", "http://elsewhere:8300")
    assert ServerConfig.load().storage_url == "./awl-data"


@pytest.mark.parametrize(("settings", "complaint"), [
    ({"tokens": ("short",)}, "at least 16 characters"),
    ({"storage_url": "http://other:8300"}, "not another HTTP data server"),
    ({"max_upload_bytes": "lots"}, "is not a size"),
    ({"max_upload_bytes": 0}, "not positive"),
    ({"colour": "blue"}, "unknown data server setting"),
])
def test_bad_server_settings_are_refused_naming_them(settings, complaint):
    with pytest.raises(ServerConfigError, match=complaint):
        ServerConfig.load(**settings)


def test_a_bad_config_file_is_named(monkeypatch, tmp_path):
    (tmp_path / "bad.toml").write_text("[dataserver\n")
    monkeypatch.setenv("AWL_CONFIG", str(tmp_path / "bad.toml"))
    with pytest.raises(ServerConfigError, match=r"bad\.toml"):
        ServerConfig.load()


@pytest.mark.parametrize(("text", "complaint"), [
    ('databse_url = "sqlite:///x.db"\n', r"sets 'databse_url', which awlineage does not read"),
    ('[dataserverr]\nstorage = "./x"\n', r"sets 'dataserverr', which awlineage"),
    ('[dataserver]\nmax_uplod = "1M"\nstorag = "./x"\n',
     r"\[dataserver\] sets 'max_uplod' \(did you mean max_upload\?\), 'storag' \(did you "
     r"mean storage\?\), which the data server does not read"),
    ('[dataserver]\nmax_upload = "10X"\n', r"max_upload in the config file's \[dataserver\]"),
])
def test_a_name_the_server_does_not_read_is_refused_as_awl_refuses_it(
        monkeypatch, tmp_path, text, complaint):
    """A typo would leave the setting at its default without a word (docs: configuration)."""
    (tmp_path / "awl.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AWL_CONFIG", raising=False)
    with pytest.raises(ServerConfigError, match=complaint):
        ServerConfig.load()


@pytest.mark.parametrize(("text", "size"), [
    (1234, 1234), ("1234", 1234), ("10k", 10240), ("512M", 512 * 1024**2),
    ("10GiB", 10 * 1024**3), ("1t", 1024**4),
])
def test_sizes_are_read_in_binary_units(text, size):
    assert parse_size(text) == size
