"""Code versions: declared, or a hash of the methods' syntax trees that ignores comments,
docstrings and formatting; recorded with every run and in the class registry."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
import uuid

import pytest
import sqlalchemy as sa

from awlineage.trace import code_version
from tests.trace.models import Exposure, MasterLevel, VersionedLevel

EDITED_MODULE = "awl_edited_pipeline"


def load_class(tmp_path, source: str, name: str) -> type:
    """Load `source` as the user's module edited and loaded again (same module name)."""
    folder = tmp_path / uuid.uuid4().hex[:8]
    folder.mkdir()
    path = folder / f"{EDITED_MODULE}.py"
    path.write_text(textwrap.dedent(source))
    module_name = EDITED_MODULE
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return getattr(module, name)


BASE = """
    from awlineage import Process, persistent

    class {name}(Process):
        level = persistent("Level", float, 0.0)

        def make(self):
            self.level = self.scaled(2.0)

        def scaled(self, factor):
            return 1.5 * factor
"""

COSMETIC = '''
    from awlineage import Process, persistent

    class {name}(Process):
        """Now with a docstring."""
        level = persistent("Level", float, 0.0)

        def make(self):
            # a comment that explains nothing
            self.level = self.scaled( 2.0 )

        def scaled(self, factor):
            """Multiply."""
            return (1.5 * factor)
'''

CHANGED = BASE.replace("1.5 * factor", "1.6 * factor")


def test_cosmetic_edits_keep_the_code_version(tmp_path) -> None:
    first = load_class(tmp_path, BASE.format(name="CvTarget"), "CvTarget")
    cosmetic = load_class(tmp_path, COSMETIC.format(name="CvTarget"), "CvTarget")
    assert code_version(first) == code_version(cosmetic)


def test_a_change_of_code_changes_the_code_version(tmp_path) -> None:
    first = load_class(tmp_path, BASE.format(name="CvTarget"), "CvTarget")
    changed = load_class(tmp_path, CHANGED.format(name="CvTarget"), "CvTarget")
    assert code_version(first) != code_version(changed)


def test_a_declared_code_version_wins() -> None:
    assert VersionedLevel.class_code_version() == "1.2"
    assert MasterLevel.class_code_version().startswith("ast:")


def test_plain_persistent_classes_have_no_code_version() -> None:
    assert Exposure.class_code_version() is None


def test_the_class_registry_records_the_code_version(db) -> None:
    master = MasterLevel(exposures=[Exposure(counts=[1.0])])
    master.make()
    master.commit()
    registry = db.framework["awl_class"]
    with db.engine.connect() as conn:
        recorded = conn.execute(sa.select(registry.c.code_version)
                                .where(registry.c.class_name == "tests.MasterLevel")).scalar_one()
    assert recorded == MasterLevel.class_code_version() == master.process_run.code_version


def test_a_declared_code_version_must_be_text_that_says_something() -> None:
    from awlineage import Process, PropertyDefinitionError

    for bad in ("", "   ", 1.1):
        with pytest.raises(PropertyDefinitionError, match=r"code_version must be a non-empty "
                                                          r"string .* not "):
            type("BadlyVersioned", (Process,), {"code_version": bad, "__module__": __name__})
