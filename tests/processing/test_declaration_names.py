"""A typo in a process class's ``targets`` or ``requires`` is said when the class is defined,
naming the class, the declaration and the name, with the names it may have meant: planning
failed on the first target with an AttributeError naming none of them (``awl: unexpected
AttributeError: 'Src' object has no attribute 'chipp' ... please report it``)."""

from __future__ import annotations

import textwrap

import pytest

from awlineage import DBObject, Needs, OnePer, OnePerGroup, Process, persistent
from awlineage.errors import PropertyDefinitionError
from tests.commands import run_awl as awl


class DnSrc(DBObject):
    chip = persistent("CCD name", str, "")
    level = persistent("Counts [ADU]", float, 0.0)

    @property
    def half(self) -> float:
        """Read only: a declaration may match on it."""
        return self.level / 2


class DnCal(DBObject):
    chip = persistent("CCD name", str, "")


def _define(**declarations: object) -> type:
    """A process class with links src (one), srcs (a list), cal, and a chip."""
    return type("DnTarget", (Process,), {
        "__module__": __name__,
        "src": persistent("Source", DnSrc, None),
        "srcs": persistent("Sources", DnSrc, []),
        "cal": persistent("Calibration", DnCal, None),
        "chip": persistent("CCD name", str, ""),
        "make": lambda self: None,
        **declarations,
    })


@pytest.mark.parametrize(("declarations", "message"), [
    ({"targets": OnePer(DnSrc, link="src", copy=("chipp",))},
     "DnTarget.targets = OnePer(...): copy names 'chipp', which is not a persistent attribute "
     "of DnSrc (did you mean chip?)"),
    ({"targets": OnePer(DnSrc, link="src"),
      "requires": {"cal": Needs(DnCal, match=("chipx",))}},
     "DnTarget.requires['cal']: match names 'chipx', which is not a persistent attribute of "
     "DnTarget (did you mean chip?)"),
    ({"targets": OnePer(DnSrc, link="src", copy=("chip",)),
      "requires": {"cal": Needs(DnCal, match=(("chip", "chipp"),))}},
     "DnTarget.requires['cal']: match names 'chipp', which is not a persistent attribute of "
     "DnCal (did you mean chip?)"),
    ({"targets": OnePer("DnSrc", link="src")},  # type: ignore[arg-type]
     "DnTarget.targets = OnePer(...): the source must be a persistent class, not 'DnSrc' "
     "(the class itself, not its name: DnSrc)"),
    ({"targets": OnePer(DnSrc, link="srcc")},
     "DnTarget.targets = OnePer(...): link names 'srcc', which is not a persistent attribute "
     "of DnTarget (did you mean src or srcs?)"),
    ({"targets": OnePer(DnSrc, link="chip")},
     "DnTarget.targets = OnePer(...): link names 'chip', which is not a link of DnTarget (it "
     "is a descriptor)"),
    ({"targets": OnePerGroup(DnSrc, link="src", by=("chip",))},
     "DnTarget.targets = OnePerGroup(...): link names 'src', which is not a link list of "
     "DnTarget (it is a link)"),
    ({"targets": OnePerGroup(DnSrc, link="srcs", by=("chips",))},
     "DnTarget.targets = OnePerGroup(...): by names 'chips', which is not a persistent "
     "attribute of DnSrc (did you mean chip?)"),
    ({"targets": OnePer(DnSrc, link="src"),
      "requires": {"cal": Needs("DnCal")}},  # type: ignore[arg-type]
     "DnTarget.requires['cal']: Needs must be a persistent class, not 'DnCal'"),
])
def test_a_misnamed_declaration_is_refused_when_the_class_is_defined(
        declarations: dict[str, object], message: str) -> None:
    with pytest.raises(PropertyDefinitionError) as raised:
        _define(**declarations)
    assert str(raised.value).startswith(message)


def test_names_that_are_there_are_accepted_python_properties_too_where_only_read() -> None:
    cls = _define(targets=OnePer(DnSrc, link="src", copy=("chip",)),
                  requires={"cal": Needs(DnCal, match=("chip",))})
    assert cls.identity == ("src",)
    _define(targets=OnePerGroup(DnSrc, link="srcs", by=("chip", ("night", len))),
            night=persistent("A key", int, None))
    _define(targets=OnePer(DnSrc, link="src"),
            requires={"cal": Needs(DnCal, match=(("chip", "chip"),),
                                   where=lambda target, cal: True)})
    with pytest.raises(PropertyDefinitionError, match="copy names 'half', which is not a "
                                                      "persistent attribute of DnTarget"):
        _define(targets=OnePer(DnSrc, link="src", copy=("half",)))  # it must be stored


def test_awl_make_says_it_in_one_line(db, tmp_path) -> None:
    (tmp_path / "typo_pipeline.py").write_text(textwrap.dedent("""
        from awlineage import DBObject, OnePer, Process, persistent

        class TypoSrc(DBObject):
            chip = persistent("CCD name", str, "")

        class TypoOut(Process):
            targets = OnePer(TypoSrc, link="src", copy=("chipp",))
            src = persistent("Source", TypoSrc, None)
            chip = persistent("CCD name", str, "")

            def make(self):
                pass
        """))
    result = awl(db, "make", "TypoOut", "--import", "typo_pipeline", "--dry-run",
                 "--executor", "serial", cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "unexpected" not in result.stderr
    assert "TypoOut.targets = OnePer(...): copy names 'chipp', which is not a persistent " \
           "attribute of TypoSrc (did you mean chip?)" in result.stderr
