"""Code versions cover the user's code a process class runs: helpers its make() calls, followed
through the user's modules, but not awlineage's, the standard library's or an installed
package's; editing a helper's formula makes the class's objects stale, naming the helper."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from awlineage import Process, TargetProcessor, select
from awlineage.processing import State
from awlineage.trace import code_version, covered_code
from tests.trace.models import Exposure, VersionedLevel

DEEPER = '''
    import time

    STARTED = time.time()


    def offset(value):
        return value - countdown(3)


    def countdown(n):
        return 0 if n == 0 else countdown(n - 1) + ping(n)


    def ping(n):
        return 0 if n <= 0 else pong(n - 1)


    def pong(n):
        return ping(n - 1)
'''

HELPERS = '''
    import {third}
    from awlineage.trace import short_repr

    from {package} import deeper

    SCALE = 2.0


    def calibrate(value):
        short_repr(value)
        return deeper.offset(value) * SCALE + {third}.bump(0.0)
'''

STAGES = '''
    from awlineage import OnePer, Process, persistent
    from tests.trace.models import Exposure

    from {package}.helpers import calibrate


    class UcStage(Process):
        targets = OnePer(Exposure, link="exposure")
        exposure = persistent("Exposure", Exposure, None)
        value = persistent("Calibrated value", float, None)

        def make(self):
            self.value = calibrate(sum(self.exposure.counts))


    class UcSummary(Process):
        targets = OnePer(UcStage, link="stage")
        stage = persistent("Stage summarised", UcStage, None)
        value = persistent("Summary value", float, None)

        def make(self):
            self.value = 10 * self.stage.value
'''

THIRD_PARTY = '''
    def bump(value):
        return value
'''


class UserPackage:
    """A user's package written into a folder on ``sys.path``, and an installed third-party
    module beside it in a ``site-packages`` folder; `load` imports them afresh, as a new
    process would after an edit."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        # fixed names: persistent classes of one name must come from one module
        self.name, self.third = "awl_uc_package", "awl_uc_third_party"
        self.folder = root / "src" / self.name
        self.folder.mkdir(parents=True)
        installed = root / "lib" / "site-packages"
        installed.mkdir(parents=True)
        monkeypatch.syspath_prepend(str(root / "src"))
        monkeypatch.syspath_prepend(str(installed))
        monkeypatch.setattr(sys, "dont_write_bytecode", True)
        self.files = {"__init__.py": self.folder / "__init__.py",
                      "deeper.py": self.folder / "deeper.py",
                      "helpers.py": self.folder / "helpers.py",
                      "stages.py": self.folder / "stages.py",
                      "third": installed / f"{self.third}.py"}
        for key, source in [("__init__.py", ""), ("deeper.py", DEEPER), ("helpers.py", HELPERS),
                            ("stages.py", STAGES), ("third", THIRD_PARTY)]:
            self.files[key].write_text(
                textwrap.dedent(source).format(package=self.name, third=self.third))

    def forget(self) -> None:
        for module in [m for m in sys.modules if m.startswith((self.name, self.third))]:
            del sys.modules[module]

    def edit(self, key: str, old: str, new: str) -> None:
        path = self.files[key]
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))

    def load(self, name: str = "UcStage") -> type[Process]:
        self.forget()
        importlib.invalidate_caches()
        return getattr(importlib.import_module(f"{self.name}.stages"), name)


@pytest.fixture
def package(tmp_path, monkeypatch) -> Iterator[UserPackage]:
    made = UserPackage(tmp_path, monkeypatch)
    yield made
    made.forget()


def test_the_code_version_covers_helpers_the_make_calls_transitively(package) -> None:
    covered = covered_code(package.load())
    assert {f"{package.name}.helpers.calibrate", f"{package.name}.helpers.SCALE",
            f"{package.name}.deeper.offset", f"{package.name}.deeper.countdown",
            f"{package.name}.deeper.ping", f"{package.name}.deeper.pong",
            f"{package.name}.stages.UcStage.make"} <= set(covered)


def test_framework_and_third_party_code_is_not_covered(package) -> None:
    covered = covered_code(package.load())
    assert not [name for name in covered
                if name.startswith(("awlineage", package.third, "time"))]


def test_editing_a_helper_formula_changes_the_code_version(package) -> None:
    before = code_version(package.load())
    package.edit("deeper.py", "return value - countdown(3)", "return value - countdown(4) / 2")
    assert code_version(package.load()) != before


def test_editing_a_module_constant_a_helper_uses_changes_the_code_version(package) -> None:
    before = code_version(package.load())
    package.edit("helpers.py", "SCALE = 2.0", "SCALE = 2.5")
    assert code_version(package.load()) != before


def test_comment_and_docstring_edits_of_a_helper_keep_the_code_version(package) -> None:
    before = code_version(package.load())
    package.edit("deeper.py", "def offset(value):\n",
                 'def offset(value):\n    """Subtract the offset."""\n    # why: the bias\n')
    assert code_version(package.load()) == before


def test_values_made_at_import_do_not_change_the_code_version(package) -> None:
    before = code_version(package.load())  # deeper.STARTED = time.time() differs each import
    assert code_version(package.load()) == before


def test_an_edit_of_a_third_party_function_is_not_followed(package) -> None:
    before = code_version(package.load())
    package.edit("third", "return value", "return value + 1000.0")
    assert code_version(package.load()) == before


def test_a_declared_code_version_covers_no_code() -> None:
    assert covered_code(VersionedLevel) == {}


def test_the_reduced_science_frame_version_covers_reduce_science() -> None:
    from targets.science import ReducedScienceFrame

    covered = covered_code(ReducedScienceFrame)
    assert {"targets.reduction.reduce_science", "targets.reduction.trace_cosmic_rays",
            "targets.science.ReducedScienceFrame.make"} <= set(covered)
    assert not [name for name in covered if name.startswith(("awlineage", "numpy", "astropy"))]


def test_an_edited_helper_remakes_the_class_and_its_dependants_naming_it(db, package) -> None:
    Exposure(chip="uc1", counts=[1.0, 2.0]).commit()
    Exposure(chip="uc2", counts=[3.0]).commit()
    summary = package.load("UcSummary")
    TargetProcessor("serial", progress=False).make(summary)
    assert select(summary).count() == 2
    package.edit("deeper.py", "return value - countdown(3)", "return value - countdown(4) / 2")
    summary = package.load("UcSummary")
    plan = TargetProcessor("serial", progress=False).plan(summary)
    stages = [n for n in plan.nodes if n.cls.__name__ == "UcStage"]
    assert len(stages) == 2 and all(n.state is State.RED for n in stages)
    code = [r for n in stages for r in n.reasons if r.kind == "code"]
    assert len(code) == 2
    assert all(r.changed == (f"{package.name}.deeper.offset",) for r in code)
    assert all(str(r).endswith(f"({package.name}.deeper.offset changed)") for r in code)
    assert plan.count(State.RED) == 4
