"""One meaning on both databases: the same random queries, in text and expression form, give
the same frames on SQLite and PostgreSQL as a plain-Python evaluation of the stated rules
(`tests.persistence.semantic_cases`), and the findings of issue 33 that led here, each alone."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from awlineage import AttributePath, Database, QueryError, commit, select
from awlineage.persistence import set_current_store
from awlineage.processing import matches
from tests.conftest import fresh_database
from tests.persistence.semantic_cases import (
    Record,
    expected,
    expression,
    random_case,
    seed_world,
    serials,
)
from tests.persistence.semantic_models import ApiNamed, LikeFrame

CASES = 2_000


@pytest.fixture
def both(request: pytest.FixtureRequest, tmp_path) -> Iterator[dict[str, Database]]:
    """The same world on an SQLite file and on a PostgreSQL schema."""
    sqlite = fresh_database("sqlite", request, tmp_path, connected=False)
    postgres = fresh_database("postgresql", request, tmp_path, connected=False)
    databases = {"sqlite": next(sqlite), "postgresql": next(postgres)}
    yield databases
    set_current_store(None)
    for opened in (sqlite, postgres):
        next(opened, None)


def _seeded(databases: dict[str, Database]) -> dict[int, Record]:
    worlds = []
    for database in databases.values():
        set_current_store(database)
        worlds.append(seed_world())
    assert worlds[0] == worlds[1]
    return worlds[0]


def test_random_queries_agree_on_both_databases_and_with_python(both) -> None:
    world = _seeded(both)
    rng = random.Random(33)
    wrong: list[str] = []
    for number in range(CASES):
        case = random_case(rng)
        want = expected(world, case)
        # Text and expression forms take turns (both compile to the same tree; each is
        # checked on 1,000 cases), so the test stays near a minute on CI.
        form, query = ("text", lambda c=case: select(c.text)) if number % 2 else \
            ("api", case.build)
        for name, database in both.items():
            set_current_store(database)
            got = serials(query())
            if got != want and len(wrong) < 10:
                wrong.append(f"{name} {form}: {case.text}\n  got {sorted(got)}\n"
                             f"  want {sorted(want)}")
    assert not wrong, "\n".join(wrong)


def test_in_memory_evaluation_agrees_with_the_databases(both) -> None:
    """`matches()` (how `--where` picks targets not made yet) follows the same rules."""
    world = _seeded(both)
    set_current_store(both["sqlite"])
    frames = select(LikeFrame).all()
    rng = random.Random(34)
    for _ in range(300):
        case = random_case(rng)
        condition = expression(case.tree)
        got = {f.serial for f in frames if matches(condition, f)}
        assert got == expected(world, case), case.text


@pytest.mark.parametrize(("pattern", "want"), [
    ("CCD%", {"CCD1"}), ("ccd%", {"ccd1"}), ("a\\_b", {"a_b"}), ("a\\\\b", {"a\\b"}),
    ("a\\\\\\_b", {"a\\_b"}), ("a_b", {"a_b", "aXb", "a\\b", "a%b"}), ("a\\%b", {"a%b"}),
    ("x*y", {"x*y"}), ("x?y", {"x?y"}), ("[a]", {"[a]"}), ("Äb", {"Äb"}),
    ("\\a%", {"ab", "a_b", "aXb", "a\\b", "a\\_b", "a%b"}),
])
def test_like_is_case_sensitive_with_backslash_escapes(db, pattern, want) -> None:
    commit([LikeFrame(serial=i, name=n) for i, n in enumerate(
        ["CCD1", "ccd1", "a_b", "aXb", "a\\b", "a\\_b", "a%b", "x*y", "x?y", "[a]", "Äb", "äb",
         "ab"])])
    assert {f.name for f in select(LikeFrame.name.like(pattern))} == want
    text = pattern.replace("\\", "\\\\")
    assert {f.name for f in select(f"LikeFrame.name like '{text}'")} == want


def test_ilike_ignores_the_case_of_ascii_letters_only(db) -> None:
    commit([LikeFrame(serial=i, name=n) for i, n in enumerate(["CCD1", "ccd1", "Äb", "äb"])])
    assert {f.name for f in select(LikeFrame.name.ilike("ccd%"))} == {"CCD1", "ccd1"}
    assert {f.name for f in select("LikeFrame.name ilike 'äB'")} == {"äb"}
    assert {f.name for f in select("LikeFrame.name not ilike 'C%'")} == {"Äb", "äb"}


def test_a_pattern_ending_in_a_lone_backslash_is_refused(db) -> None:
    with pytest.raises(QueryError, match="lone backslash"):
        LikeFrame.name.like("ab\\")
    with pytest.raises(QueryError, match="lone backslash"):
        select("LikeFrame.name like 'ab\\\\'")


def test_a_path_through_a_missing_link_reads_as_a_missing_value(db) -> None:
    first = LikeFrame(serial=0, nexp=None)
    second = LikeFrame(serial=1, nexp=2, earlier=first)
    third = LikeFrame(serial=2, nexp=3, earlier=second)
    lone = LikeFrame(serial=3, nexp=1)
    commit([first, second, third, lone])

    def got(query) -> set[int]:
        return serials(select(query))

    assert got(LikeFrame.earlier.nexp == None) == {0, 1, 3}  # noqa: E711
    assert got(LikeFrame.earlier.nexp != None) == {2}  # noqa: E711
    assert got(LikeFrame.earlier.nexp != 2) == {0, 1, 3}
    assert got(LikeFrame.earlier.nexp > 0) == {2}
    assert got(LikeFrame.earlier.nexp.in_([None])) == {0, 1, 3}
    assert got(LikeFrame.earlier.earlier.nexp == None) == {0, 1, 2, 3}  # noqa: E711
    assert got("LikeFrame.earlier.nexp == None") == {0, 1, 3}
    everything = got(LikeFrame.earlier.nexp == None) | got(  # noqa: E711
        LikeFrame.earlier.nexp != None)  # noqa: E711
    assert everything == {0, 1, 2, 3}


def test_an_empty_link_list_has_no_member_to_match(db) -> None:
    alone = LikeFrame(serial=0)
    commit([alone, LikeFrame(serial=1, neighbours=[alone])])
    assert serials(select(LikeFrame.neighbours.nexp == None)) == {1}  # noqa: E711
    assert serials(select(~(LikeFrame.neighbours.nexp == None))) == {0}  # noqa: E711


@pytest.mark.parametrize("name", ["overlaps", "steps", "start", "index", "root", "contains",
                                  "within", "like", "ilike", "asc", "desc", "last", "in_",
                                  "attribute", "check_value"])
def test_attributes_named_like_path_members_are_reached_through_a_link(db, name) -> None:
    member = ApiNamed()
    values = {"overlaps": [member], "steps": ["bias"]}
    target = ApiNamed(**{name: values.get(name, f"{name}-value")})
    commit([member, target, ApiNamed(counterpart=target)])
    path = getattr(ApiNamed.counterpart, name)
    assert str(path) == f"ApiNamed.counterpart.{name}"
    if name in values:
        wanted = values[name][0]
        assert len(select(AttributePath.contains(path, wanted))) == 1
        if name == "steps":
            assert len(select(f"ApiNamed.counterpart.{name} contains 'bias'")) == 1
    else:
        assert len(select(path == f"{name}-value")) == 1
        assert len(select(f"ApiNamed.counterpart.{name} == '{name}-value'")) == 1


def test_a_shadowed_path_method_is_still_reached_through_the_class(db) -> None:
    target = ApiNamed(start="x")
    commit([target, ApiNamed(counterpart=target)])
    assert len(select(AttributePath.in_(ApiNamed.counterpart, [target]))) == 1
    assert str(ApiNamed.counterpart.attribute) == "ApiNamed.counterpart.attribute"


@pytest.mark.parametrize("build", [
    lambda: ~LikeFrame.nexp, lambda: ~LikeFrame.name, lambda: ~LikeFrame.owner,
    lambda: ~LikeFrame.tags, lambda: ~LikeFrame.earlier.nexp,
])
def test_negating_an_attribute_is_a_query_error(build) -> None:
    with pytest.raises(QueryError, match="~ negates a condition"):
        build()


@pytest.mark.parametrize("method", ["yield_per", "limit", "offset"])
@pytest.mark.parametrize("value", [2**31, 2**63, 2**64, -1, 10**30, 1.5, True, "3"])
def test_absurd_counts_are_refused_before_any_sql(db, method, value) -> None:
    """limit and offset take 0 to 2**63 - 1 (2**31 is a fine limit); yield_per 1 to
    1,000,000; anything else is a QueryError naming the method, never a driver's error."""
    commit([LikeFrame(serial=1)])
    query = select(LikeFrame)
    most = 1_000_000 if method == "yield_per" else 2**63 - 1
    fine = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= most
    if fine:
        assert len(list(getattr(query, method)(value))) == (0 if method == "offset" else 1)
    else:
        with pytest.raises(QueryError, match=method):
            getattr(query, method)(value)


def test_strings_compare_and_sort_by_code_point_whatever_the_locale(postgres_db) -> None:
    """A PostgreSQL column under a Unicode collation (which puts 'a' before 'B') still
    compares and sorts as SQLite and Python do."""
    commit([LikeFrame(serial=i, name=n) for i, n in enumerate(["B", "a", "C", "b"])])
    table = postgres_db.tables_for(LikeFrame).table
    with postgres_db.engine.begin() as conn:
        conn.exec_driver_sql(f'ALTER TABLE "{postgres_db.schema}"."{table.name}" ALTER COLUMN '
                             'name TYPE text COLLATE "und-x-icu"')
    assert {f.name for f in select(LikeFrame.name < "a")} == {"B", "C"}
    assert [f.name for f in select(LikeFrame).order_by("name")] == ["B", "C", "a", "b"]
    assert [f.name for f in select(LikeFrame).order_by("-name")] == ["b", "a", "C", "B"]


def test_a_subclass_attribute_never_shadows_a_member_on_a_link_to_its_base(db) -> None:
    """`ApiNamed` (a DBObject) declares `contains`; a link to any DBObject keeps the member,
    so what framework code means by `RegionTable.output.in_` cannot change with a user's
    class."""
    member = LikeFrame(serial=1)
    commit([member, LikeFrame(serial=2, neighbours=[member])])
    assert callable(LikeFrame.neighbours.contains)
    assert serials(select(LikeFrame.neighbours.contains(member))) == {2}
    assert str(LikeFrame.neighbours.attribute("contains")) == "LikeFrame.neighbours.contains"


def test_the_fuzz_names_an_attribute_after_every_public_member_of_a_path() -> None:
    from tests.persistence.query_cases import PATH_MEMBERS

    members = {name for name in dir(AttributePath) if not name.startswith("_")}
    assert set(PATH_MEMBERS) == members
    assert members <= set(ApiNamed._properties)
