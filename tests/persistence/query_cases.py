"""Hostile queries, as hypothesis strategies: the fuzz test and `benchmarks/query_fuzz.py`
draw from the same generators.

Three families. `texts()` gives textual queries: valid ones, mutations of valid ones, token
soup, deep nesting, long link paths, huge literals and arbitrary unicode. `expressions()`
gives callables that build a query with the expression API from random names, operators and
values of every Python type (including ones no database can hold). `refinements()` calls
select() with odd arguments and chains Query methods (filter, order_by, limit, slices ...).
`run_case` runs one case and says how it ended: a result, one of awlineage's errors, or a raw
exception (a bug).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import math
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from hypothesis import strategies as st

from awlineage import AwlError, Database, DBObject, commit, select
from awlineage.persistence import Kind, Path
from tests.persistence.models import CameraFrame, Instrument, MasterBias, Site, utc
from tests.persistence.semantic_models import ApiNamed

CLASSES = ("CameraFrame", "Instrument", "Site", "MasterBias", "DBObject", "ApiNamed",
           "FlatfieldImage", "Nope")
PATH_MEMBERS = ("overlaps", "steps", "start", "index", "root", "contains", "within", "like",
                "ilike", "asc", "desc", "last", "in_", "attribute", "check_value")
"""Public members of an attribute path, each also a persistent attribute of `ApiNamed`."""
ATTRIBUTES = ("chip", "exptime", "nexp", "is_science", "obs_date", "keywords", "gains",
              "instrument", "overlaps", "previous", "name", "site", "altitude", "level",
              "object_id", "creation_date", "version", "missing", "counterpart", *PATH_MEMBERS)
OPERATORS = ("==", "!=", "<", "<=", ">", ">=", "=", "like", "not like", "ilike", "not ilike",
             "in", "contains")
TOKENS = (*OPERATORS, "and", "or", "not", "!", "&&", "||", "(", ")", "[", "]", ",", ".",
          "true", "false", "None", "null", "'a'", '"b"', "1", "-2", "3.5", "1e999",
          "2024-01-01", "2024-02-30T25:00", *CLASSES, *ATTRIBUTES, "'", '"', "\\", "%")
VALID_PATHS = ("CameraFrame.chip", "CameraFrame.exptime", "CameraFrame.nexp",
               "CameraFrame.is_science", "CameraFrame.obs_date", "CameraFrame.keywords[1]",
               "CameraFrame.keywords", "CameraFrame.gains[0]", "CameraFrame.gains",
               "CameraFrame.instrument.name", "CameraFrame.instrument.site.altitude",
               "CameraFrame.overlaps.chip", "CameraFrame.previous.previous.nexp",
               "CameraFrame." + "previous." * 20 + "chip", "Instrument.site.name",
               "MasterBias.level", "DBObject.chip", "DBObject.object_id",
               *(f"ApiNamed.counterpart.{name}" for name in PATH_MEMBERS))
CHAIN = 24


# -- the data every case runs against ------------------------------------------------------
def seed() -> list[DBObject]:
    """Commit a small world: two sites, two instruments, a chain of frames, master biases."""
    paranal = Site(name="Paranal", altitude=2635.0)
    wfi = Instrument(name="WFI", site=paranal)
    frames: list[CameraFrame] = []
    for i in range(CHAIN):
        frames.append(CameraFrame(
            chip=f"ccd{50 + i % 3}", exptime=float(i * 10), nexp=i % 4, is_science=bool(i % 2),
            obs_date=utc(2024, 1, 1 + i % 28), keywords=["OBJECT", f"K{i}"], gains=[2.0, i / 3],
            instrument=wfi if i % 2 else None, previous=frames[-1] if frames else None,
            overlaps=frames[-2:]))
    biases = [MasterBias(chip="ccd50", obs_date=utc(2024, 1, 2), level=200.0 + i)
              for i in range(3)]
    named = ApiNamed(overlaps=frames[:2], steps=["bias", "flat"],
                     **{name: f"{name}%" for name in PATH_MEMBERS[2:]})
    made: list[DBObject] = [paranal, wfi, *frames, *biases, named, ApiNamed(counterpart=named),
                            ApiNamed()]
    commit(made)
    return made


def fingerprint(db: Database) -> str:
    """A hash of every row of every table: equal before and after means nothing changed."""
    digest = hashlib.sha256()
    with db.engine.connect() as conn:
        for table in sorted(sa.inspect(conn).get_table_names(schema=db.schema)):
            rows = conn.execute(sa.text(f'SELECT * FROM "{table}"')).all()
            digest.update(f"{table}:{len(rows)}:{sorted(map(repr, rows))}".encode())
    return digest.hexdigest()


def run_case(case: str | Callable[[], Any]) -> str:
    """Run one case to the end; return ``"result"``, ``"error"`` (an AwlError), or raise."""
    try:
        query = select(case) if isinstance(case, str) else case()
        query.count()
        query.limit(3).all()
    except AwlError:
        return "error"
    return "result"


# -- values -------------------------------------------------------------------------------
# Lone surrogates (what undecodable command-line bytes become), NUL and the astral planes.
_ANY_CHARACTER = st.one_of(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
                           st.sampled_from("\x00'\"\\%_"), st.characters())
_ZONES = st.builds(lambda m: datetime.timezone(datetime.timedelta(minutes=m)),
                   st.integers(-23 * 60 - 59, 23 * 60 + 59))
VALUES = st.one_of(
    st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
    st.builds(lambda n: 10**n, st.integers(300, 5000)),
    st.floats(), st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0]),
    st.text(), st.text(_ANY_CHARACTER, max_size=5), st.binary(max_size=5),
    st.booleans(), st.none(),
    st.datetimes(timezones=_ZONES), st.datetimes(), st.dates(),
    st.lists(st.integers(), max_size=3), st.just(object()), st.just(CameraFrame),
)


def _value_text(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return str(draw(st.integers()))
    if kind == 1:
        return repr(draw(st.floats(allow_nan=False, allow_infinity=False)))
    if kind == 2:
        return "'" + draw(st.text(max_size=8)).replace("\\", "\\\\").replace("'", "\\'") + "'"
    if kind == 3:
        return draw(st.sampled_from(["true", "false", "None", "null", "TRUE"]))
    if kind == 4:
        day = draw(st.datetimes(min_value=datetime.datetime(1, 1, 1), timezones=_ZONES))
        return day.isoformat().replace("+00:00", "Z") if draw(st.booleans()) else \
            f"{day.year:04d}-{day.month:02d}-{day.day:02d}"
    if kind == 5:
        return draw(st.sampled_from(["0001-01-01T00:00+05:00", "9999-12-31T23:59-05:00",
                                     "2024-13-45", "0000-00-00"]))
    if kind == 6:
        return draw(st.sampled_from(["9", "-9", "1.", "0."])) * draw(st.integers(300, 5000))
    if kind in (7, 8) and draw(st.booleans()):
        return "'" + draw(st.sampled_from(["ccd50", "OBJECT", "K1", "WFI", "Paranal", "%5%",
                                           "ccd_1"])) + "'"
    if kind == 7:
        return repr(draw(st.sampled_from(["%", "_", "O%", "%a" * 20000, "\udcff", "\x00"])))
    if kind == 8:
        return "'" + draw(st.text(_ANY_CHARACTER, max_size=6)
                          ).replace("\\", "").replace("'", "") + "'"
    return draw(st.sampled_from(["1e999", "-1e999", "1e-999", ".5", "+7", "--1"]))


@st.composite
def _path_text(draw: st.DrawFn, long: bool = True) -> str:
    if draw(st.booleans()):
        return draw(st.sampled_from(VALID_PATHS))
    cls = draw(st.sampled_from(CLASSES[:5]))
    if long and draw(st.integers(0, 4)) == 0:  # a long chain of self-links
        names = ["previous"] * draw(st.integers(1, 1100)) + [draw(st.sampled_from(ATTRIBUTES))]
    else:
        names = draw(st.lists(st.sampled_from(ATTRIBUTES), min_size=1, max_size=4))
    text = cls + "." + ".".join(names)
    if draw(st.integers(0, 3)) == 0:
        text += f"[{draw(st.sampled_from(['0', '-1', '2', '99999999999', '9' * 30]))}]"
    return text


@st.composite
def _condition_text(draw: st.DrawFn, depth: int = 0, long: bool = True) -> str:
    choice = draw(st.integers(0, 6 if depth < 4 else 2))
    if choice <= 2:
        op = draw(st.sampled_from(OPERATORS))
        path = draw(_path_text(long))
        if op == "in":
            items = [_value_text(draw) for _ in range(draw(st.integers(0, 4)))]
            return f"{path} in ({', '.join(items)})"
        return f"{path} {op} {_value_text(draw)}"
    if choice == 3:
        return "not " + draw(_condition_text(depth + 1))
    if choice == 4:
        return "(" + draw(_condition_text(depth + 1)) + ")"
    joiner = draw(st.sampled_from([" and ", " or ", " && ", " || "]))
    return joiner.join(draw(st.lists(_condition_text(depth + 1), min_size=2, max_size=4)))


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    text = draw(_condition_text())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        what = draw(st.integers(0, 3))
        if what == 0:
            text = text[:at] + text[at + draw(st.integers(1, 5)):]
        elif what == 1:
            text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at:]
        elif what == 2:
            text = text[:at] + draw(st.text(max_size=3)) + text[at:]
        else:
            text = text[:at] + text[at:] * 2
    return text


@st.composite
def _deep(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 600))
    leaf = draw(_condition_text(4, long=False))
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return "not " * depth + leaf
    if shape == 1:
        return "(" * depth + leaf + ")" * depth
    if shape == 2:
        text = leaf
        for i in range(depth):
            text = f"({leaf} {'and' if i % 2 else 'or'} {text})"
        return text
    return " or ".join([leaf] * depth * 4)


_TEXT_PATHS = (("CameraFrame.chip", "'ccd5%'"), ("CameraFrame.exptime", "30.5"),
               ("CameraFrame.nexp", "2"), ("CameraFrame.is_science", "true"),
               ("CameraFrame.obs_date", "2024-01-05T12:00Z"), ("CameraFrame.keywords[1]", "'K3'"),
               ("CameraFrame.gains[-1]", "1.5"), ("CameraFrame.instrument.site.name", "'Paranal'"),
               ("CameraFrame.overlaps.nexp", "1"), ("MasterBias.level", "201"),
               ("CameraFrame." + "previous." * 18 + "nexp", "0"))


@st.composite
def _valid_text(draw: st.DrawFn, depth: int = 0) -> str:
    """A query that parses and names real attributes, with values of their types."""
    choice = draw(st.integers(0, 4 if depth < 3 else 0))
    if choice == 0:
        path, value = draw(st.sampled_from(_TEXT_PATHS))
        op = draw(st.sampled_from(["==", "!=", "<", ">=", "like", "not like", "in", "="]))
        if op in ("like", "not like"):
            return f"CameraFrame.chip {op} {draw(st.sampled_from(['%', 'ccd5_', 'x%']))!r}"
        if op == "in":
            return f"{path} in ({value}, {value})"
        if path.endswith("is_science") and op in ("<", ">="):
            op = "!="
        return f"{path} {op} {value}"
    if choice == 1:
        return "not " + draw(_valid_text(depth + 1))
    if choice == 2:
        return "(" + draw(_valid_text(depth + 1)) + ")"
    joiner = draw(st.sampled_from([" and ", " or "]))
    return joiner.join(draw(st.lists(_valid_text(depth + 1), min_size=2, max_size=3)))


def texts() -> st.SearchStrategy[str]:
    """Textual queries of every kind."""
    return st.one_of(
        _valid_text(), _condition_text(), _mutated(), _deep(),
        st.lists(st.sampled_from(TOKENS), max_size=12).map(" ".join),
        st.text(max_size=30), st.text(_ANY_CHARACTER, max_size=30),
    )


# -- the expression API -------------------------------------------------------------------
@st.composite
def _expression(draw: st.DrawFn, objects: list[DBObject], depth: int = 0) -> Callable[[], Any]:
    choice = draw(st.integers(0, 5 if depth < 3 else 1))
    if choice == 0:
        return draw(_typed_comparison(objects))
    if choice == 1:
        cls = draw(st.sampled_from([CameraFrame, Instrument, Site, MasterBias, DBObject,
                                    ApiNamed]))
        # The first name is one the class has: a class attribute that does not exist is
        # Python's AttributeError, raised before any query is built.
        first = draw(st.sampled_from(sorted(cls._properties)))  # type: ignore[attr-defined]
        names = [first, *draw(st.one_of(
            st.lists(st.sampled_from(ATTRIBUTES), max_size=3),
            st.integers(1, 1100).map(lambda n: ["previous"] * n + ["chip"]),
        ))]
        index = draw(st.one_of(st.none(), st.integers(-(2**40), 2**40), st.sampled_from(
            ["a", 1.5, True])))
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "like", "ilike", "in_",
                                   "contains", "~"]))
        value = draw(st.one_of(VALUES, st.sampled_from(objects)))
        many = draw(st.lists(VALUES, max_size=4))

        def build() -> Any:
            path = getattr(cls, names[0])
            for name in names[1:]:
                # Through a link, plain getattr reaches the linked class's attribute even when
                # it is named like a member of paths (ApiNamed.counterpart.like); elsewhere
                # attribute() says why there is no attribute to follow.
                path = getattr(path, name) if _declares(path, name) else \
                    Path.attribute(path, name)
            if index is not None:
                path = path[index]
            if op in ("like", "ilike", "in_", "contains"):
                method = getattr(Path, op)  # through the class: never shadowed
                return method(path, many if op == "in_" else value)
            if op == "~":
                return ~path
            return {"==": lambda: path == value, "!=": lambda: path != value,
                    "<": lambda: path < value, "<=": lambda: path <= value,
                    ">": lambda: path > value, ">=": lambda: path >= value}[op]()
        return build
    if choice == 2:
        inner = draw(_expression(objects, depth + 1))
        times = draw(st.integers(1, 300))

        def negate() -> Any:
            built = inner()
            for _ in range(times):
                built = ~built
            return built
        return negate
    parts = draw(st.lists(_expression(objects, depth + 1), min_size=2, max_size=3))
    junk = draw(st.sampled_from([None, 5, "x", True]))
    combine = draw(st.sampled_from(["&", "|", "junk"]))

    def join() -> Any:
        built = [p() for p in parts]
        result = built[0]
        for part in built[1:]:
            result = (result & part) if combine == "&" else (result | part) \
                if combine == "|" else (junk & part)
        return result
    return join


_TYPED = {str: st.text(max_size=6), float: st.floats(), int: st.integers(-5, 2**64),
          bool: st.booleans(),
          datetime.datetime: st.datetimes(min_value=datetime.datetime(1, 1, 2),
                                          max_value=datetime.datetime(9999, 12, 30),
                                          timezones=_ZONES)}
_TYPED_PATHS = (
    (lambda: CameraFrame.chip, str), (lambda: CameraFrame.exptime, float),
    (lambda: CameraFrame.nexp, int), (lambda: CameraFrame.is_science, bool),
    (lambda: CameraFrame.obs_date, datetime.datetime), (lambda: CameraFrame.keywords[1], str),
    (lambda: CameraFrame.gains[-1], float), (lambda: CameraFrame.instrument.site.name, str),
    (lambda: CameraFrame.overlaps.exptime, float), (lambda: MasterBias.level, float),
    (lambda: CameraFrame.previous.previous.previous.obs_date, datetime.datetime),
)


def _declares(path: Any, name: str) -> bool:
    """True when `path` ends in a link whose declared class has attribute `name`."""
    last = path._last
    return path._index is None and (last.kind.is_link or last.kind is Kind.LINK_LIST) \
        and name in last.type._properties


@st.composite
def _typed_comparison(draw: st.DrawFn, objects: list[DBObject]) -> Callable[[], Any]:
    """A comparison that is usually valid: a real path and a value of its type."""
    make_path, kind = draw(st.sampled_from(_TYPED_PATHS))
    value = draw(_TYPED[kind])
    op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "like", "in_"]))
    if op == "like":
        return lambda: make_path().like(value if kind is str else "%")
    if op == "in_":
        many = draw(st.lists(_TYPED[kind], max_size=4))
        return lambda: make_path().in_(many)
    operators = {"==": "__eq__", "!=": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__",
                 ">=": "__ge__"}
    return lambda: getattr(make_path(), operators[op])(value)


def expressions(objects: list[DBObject]) -> st.SearchStrategy[Callable[[], Any]]:
    """Callables building a query with the expression API (and running select() on it)."""
    return _expression(objects).map(lambda build: lambda: select(build()))


_ABSURD_COUNTS = st.sampled_from([0, -1, 2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64,
                                  10**30, -(2**63), 1.5, math.inf])
_ARGUMENTS = st.one_of(VALUES, _ABSURD_COUNTS, st.sampled_from(
    ["chip", "-exptime", "+nexp", "instrument", "overlaps", "previous", "keywords", "nope",
     "-", "", CameraFrame.chip, CameraFrame.instrument, CameraFrame.chip.desc(),
     Instrument.name, CameraFrame.keywords[0], CameraFrame.instrument.site]))
_CLASSES = st.sampled_from([CameraFrame, Instrument, Site, MasterBias, DBObject, None, 5, "x",
                            object])


@st.composite
def _refined(draw: st.DrawFn, objects: list[DBObject]) -> Callable[[], Any]:
    """select() called with odd arguments, then refined by a chain of Query methods."""
    what = draw(st.one_of(_CLASSES, _typed_comparison(objects), st.just("CameraFrame.nexp > 0"),
                          st.just("chip == 'ccd50'")))
    cls = draw(_CLASSES)
    steps = draw(st.lists(st.tuples(
        st.sampled_from(["filter", "order_by", "limit", "offset", "prefetch", "newest", "slice",
                         "index", "first", "exists", "len", "yield_per"]),
        st.lists(_ARGUMENTS, max_size=2)), max_size=4))

    def build() -> Any:
        target = what() if callable(what) and not isinstance(what, type) else what
        query = select(target, cls) if cls is not None else select(target)
        for method, arguments in steps:
            if method == "slice":
                query = query[slice(*arguments[:2])] if arguments else query[:]
            elif method == "index":
                # Out of range is IndexError, as the sequence protocol says: not a failure.
                with contextlib.suppress(IndexError):
                    query[arguments[0] if arguments else 0]
            elif method in ("first", "exists"):
                getattr(query, method)()
            elif method == "len":
                len(query)
            elif method == "newest":
                query = query.newest()
            elif method in ("filter", "limit", "offset", "yield_per"):  # exactly one argument
                query = getattr(query, method)(arguments[0] if arguments else 1)
            else:
                query = getattr(query, method)(*arguments)
        return query
    return build


def refinements(objects: list[DBObject]) -> st.SearchStrategy[Callable[[], Any]]:
    """Callables calling select() and the Query methods with arguments of every kind."""
    return _refined(objects)
