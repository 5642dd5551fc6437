"""The DDL in schema/ is what `awl schema dump` generates now."""

from __future__ import annotations

from pathlib import Path

import pytest

from awlineage.database._ddl import framework_ddl
from awlineage.federation import SITE_TABLES

SCHEMA = Path(__file__).resolve().parents[2] / "schema"


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_schema_files_are_current(backend: str) -> None:
    path = SCHEMA / f"{backend}.sql"
    assert path.read_text() == framework_ddl(backend, extra=SITE_TABLES), \
        f"{path} is stale: run awl schema dump"


def test_generated_ddl_names_the_framework_tables() -> None:
    ddl = framework_ddl("postgresql")
    assert "CREATE TABLE awl_object" in ddl and "CREATE TABLE awl_class" in ddl
    assert "TIMESTAMP WITH TIME ZONE" in ddl
