"""Classes from any process: qualified names, short names that resolve when unambiguous, and
read-only stand-ins for classes defined in a script that is not running here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from awlineage import (
    Process,
    TargetProcessor,
    ancestors,
    get,
    get_dependencies,
    prov_json,
    select,
)
from awlineage.errors import (
    AmbiguousClassError,
    QueryError,
    StandInClassError,
    UnknownAttributeError,
    UnknownClassError,
)
from awlineage.persistence import is_stand_in, qualified_name
from tests.commands import run_awl

REPO = Path(__file__).resolve().parents[2]

PROC_SCRIPT = """
    import sys
    from awlineage import DBObject, Process, connect, persistent, select

    connect()

    class Measurement(DBObject):
        value = persistent("Measured value [ADU]", float, 0.0)

    class SumParameters(DBObject):
        scale = persistent("Scale applied to the sum", float, 1.0)

    class Summary(Process):
        measurements = persistent("Measurements summed", Measurement, [])
        process_params = persistent("Parameters", SumParameters, None)
        total = persistent("Scaled sum", float, None)

        def make(self):
            self.total = self.process_params.scale * sum(m.value for m in self.measurements)

    summary = Summary(measurements=[Measurement(value=v) for v in (1.5, 2.5)])
    summary.make()
    summary.commit()
    print(summary.object_id)
"""


def run_script(db, folder: Path, name: str, source: str) -> str:
    """Run `source` as ``python NAME`` in `folder` on the test's database; its stdout."""
    (folder / name).write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=str(REPO),
               AWL_DATABASE_URL=db.url.render_as_string(hide_password=False))
    if db.schema:
        env["AWL_DATABASE_SCHEMA"] = db.schema
    result = subprocess.run([sys.executable, name], cwd=folder, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def summary_id(db, tmp_path) -> int:
    return int(run_script(db, tmp_path, "proc.py", PROC_SCRIPT).split()[-1])


def test_an_object_of_a_script_class_is_read_as_a_stand_in(db, summary_id) -> None:
    summary = get(summary_id)
    assert is_stand_in(type(summary))
    assert qualified_name(type(summary)) == "proc.Summary"
    assert str(type(summary)) == "Summary (read from the registry; defined in script proc.py)"
    assert summary.total == 4.0
    assert sorted(m.value for m in summary.measurements) == [1.5, 2.5]
    assert summary.process_params.scale == 1.0
    assert summary.process_run.status == "succeeded"


def test_a_stand_in_keeps_docs_defaults_and_its_place_in_the_hierarchy(db, summary_id) -> None:
    summary = get(summary_id)
    cls = type(summary)
    assert issubclass(cls, Process)
    assert cls._properties["total"].doc == "Scaled sum"
    params_cls = cls._properties["process_params"].type
    assert params_cls._properties["scale"].default == 1.0
    assert [type(o) for o in select(Process) if o.object_id == summary_id] == [cls]


def test_a_stand_in_refuses_make_commit_and_new_objects(db, summary_id) -> None:
    summary = get(summary_id)
    with pytest.raises(StandInClassError, match=r"make Summary .*defined in script proc\.py"):
        summary.make()
    with pytest.raises(StandInClassError, match="commit Summary"):
        summary.commit()
    with pytest.raises(StandInClassError, match="create a Summary"):
        type(summary)()
    with pytest.raises(StandInClassError, match="plan targets of Summary"):
        TargetProcessor("serial", progress=False).make(type(summary))


def test_awl_make_of_a_class_it_cannot_import_says_so(db, summary_id, tmp_path) -> None:
    result = run_awl(db, "make", "Summary", "--dry-run")
    assert result.returncode == 2
    assert "cannot make Summary here: Summary (read from the registry; defined in script " \
        "proc.py), whose code this process cannot import" in result.stderr
    assert "declares no targets" not in result.stderr
    assert "import the script as a module: --import proc from " in result.stderr
    following = run_awl(db, "make", "Summary", "--import", "proc", "--dry-run",
                        cwd=tmp_path)  # the hint, followed in the script's folder
    assert "cannot import" not in following.stderr  # the real class (it has no targets)
    assert "Summary declares no targets" in following.stderr


def test_text_queries_and_lineage_helpers_read_script_classes(db, summary_id) -> None:
    assert [o.object_id for o in select("Summary.total > 1")] == [summary_id]
    assert [o.object_id for o in select("proc.Summary.total > 1")] == [summary_id]
    summary = get(summary_id)
    assert {type(o).__name__ for o in ancestors(summary)} >= {"Measurement", "SumParameters"}
    assert set(get_dependencies(summary)) >= {"measurements", "process_params"}
    assert f"awl:Summary/{summary_id}" in json.loads(prov_json(summary))["entity"]


def test_two_scripts_with_one_class_name_each_find_only_their_own_objects(db, tmp_path) -> None:
    first = """
        from awlineage import DBObject, connect, persistent, select
        connect()
        class RawFrame(DBObject):
            exptime = persistent("Exposure time [s]", float, 0.0)
        RawFrame(exptime=30.0).commit()
        print(select("RawFrame.exptime > 10").count(), select(RawFrame).count())
    """
    second = """
        from awlineage import DBObject, connect, persistent, select
        connect()
        class RawFrame(DBObject):
            exptime = persistent("Exposure time [s]", str, "")
            chip = persistent("CCD", str, "")
        RawFrame(exptime="long", chip="ccd50").commit()
        RawFrame(exptime="short", chip="ccd51").commit()
        print(select("RawFrame.chip == 'ccd50'").count(), select(RawFrame).count())
    """
    assert run_script(db, tmp_path, "first.py", first).split() == ["1", "1"]
    assert run_script(db, tmp_path, "second.py", second).split() == ["1", "2"]
    assert run_script(db, tmp_path, "first.py", first).split() == ["2", "2"]
    assert sorted(db.registered_classes()) >= ["first.RawFrame", "second.RawFrame"]
    with pytest.raises(AmbiguousClassError, match=r"first\.RawFrame or second\.RawFrame"):
        select("RawFrame.exptime > 10")
    assert select("second.RawFrame.chip == 'ccd51'").count() == 1


def test_a_script_namespace_that_is_no_identifier_is_written_in_quotes(db, tmp_path) -> None:
    script = """
        from awlineage import DBObject, connect, persistent
        connect()
        class Hy(DBObject):
            n = persistent("A number", int, 0)
        Hy(n=3).commit()
    """
    run_script(db, tmp_path, "my-script.py", script)
    run_script(db, tmp_path, "other.py", script)
    with pytest.raises(AmbiguousClassError, match=r'it may mean "my-script"\.Hy or other\.Hy'):
        select("Hy.n == 3")
    assert select('"my-script".Hy.n == 3').count() == 1
    assert select('"my-script".Hy').count() == 1
    assert select("other.Hy").count() == 1
    with pytest.raises(UnknownAttributeError, match=r"Hy has no persistent attribute 'm'"):
        select('"my-script".Hy.m == 3')
    with pytest.raises(QueryError, match=r'mixes unrelated classes (other\.Hy and '
                                         r'"my-script"\.Hy|"my-script"\.Hy and other\.Hy)$'):
        select('"my-script".Hy.n == 3 and other.Hy.n == 3')


def test_an_unknown_class_name_is_named(db) -> None:
    with pytest.raises(UnknownClassError, match="'Nonesuch'"):
        db.class_named("Nonesuch")
    with pytest.raises(UnknownClassError, match=r"'proc\.Nonesuch'"):
        db.class_named("proc.Nonesuch")
