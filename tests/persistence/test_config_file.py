"""The config file (``awl.toml``): its settings are read, and a name awlineage does not read
is refused by name instead of skipped, so a typo cannot leave a setting at its default."""

from __future__ import annotations

import pytest

from awlineage import ConfigurationError, config
from tests.commands import run_awl


def test_a_config_file_sets_what_it_names(tmp_path, monkeypatch) -> None:
    (tmp_path / "awl.toml").write_text('database_url = "sqlite:///from-file.db"\n'
                                       '[dataserver]\nstorage = "./files"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AWL_DATABASE_URL", raising=False)
    monkeypatch.delenv("AWL_CONFIG", raising=False)
    assert config.setting("database_url") == "sqlite:///from-file.db"


def test_a_misspelt_setting_is_refused_naming_it_and_its_likely_meaning(tmp_path,
                                                                        monkeypatch) -> None:
    (tmp_path / "awl.toml").write_text('databse_url = "sqlite:///typo.db"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AWL_CONFIG", raising=False)
    monkeypatch.delenv("AWL_DATABASE_URL", raising=False)
    with pytest.raises(ConfigurationError,
                       match=r"awl\.toml sets 'databse_url' \(did you mean database_url\?\)"):
        config.setting("database_url")
    result = run_awl(None, "select", "--count", "DBObject", cwd=tmp_path)
    assert result.returncode != 0 and "databse_url" in result.stderr
    assert not (tmp_path / "awlineage.db").exists()  # the default was not quietly used
