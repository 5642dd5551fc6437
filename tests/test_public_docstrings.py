"""Every name in ``awlineage.__all__`` is documented the numpy way, with an example that runs:
numpydoc's validator finds none of the errors in `CHECKED_CODES`, and our own section rules
hold (Examples everywhere, with a doctest that shows a result; Raises for every function; an
exception's example raises and catches it). The examples themselves run in
``bash .ci/doctests``."""

from __future__ import annotations

import enum
import inspect
import re

import pytest
from numpydoc.docscrape import get_doc_object
from numpydoc.validate import validate

import awlineage

# numpydoc error codes a public docstring must not have. Left out on purpose: GL01 (our
# summaries start on the line of the opening quotes), ES01 (an extended summary is optional),
# SA01-SA04 (See Also is optional), PR08/PR09 and RT04/RT05 (capitals and full stops in
# descriptions are the writer's choice), GL09/GL10 (deprecation and markdown notes).
CHECKED_CODES = frozenset({
    "GL02",  # closing quotes on their own line after the text
    "GL03",  # no double blank lines
    "GL05",  # no tabs
    "GL06",  # only known section names
    "GL07",  # sections in the numpydoc order
    "GL08",  # there is a docstring at all
    "SS01",  # there is a summary
    "SS02",  # the summary starts with a capital letter
    "SS03",  # the summary ends with a full stop
    "SS04",  # no leading whitespace in the summary
    "SS05",  # the summary says what to do ("Return"), not what it does ("Returns")
    "SS06",  # the summary is one line (the line autosummary tables show)
    "PR01",  # every parameter is documented
    "PR02",  # no parameter is documented that the signature lacks
    "PR03",  # parameters in the order of the signature
    "PR04",  # every parameter has a type
    "PR05",  # a parameter's type does not end in a full stop
    "PR06",  # types say "int", "bool", "str", not "integer", "boolean", "string"
    "PR07",  # every parameter has a description
    "PR10",  # "x : int", with spaces round the colon
    "RT01",  # a function that returns something has a Returns section
    "RT02",  # a Returns entry's first line is its type (or name : type)
    "RT03",  # a Returns entry has a description
    "YD01",  # a generator has a Yields section
    "EX01",  # there is an Examples section
})

PUBLIC = sorted(awlineage.__all__)


def _qualified(name: str) -> str:
    return f"awlineage.{name}"


def _sections(name: str) -> dict:
    obj = getattr(awlineage, name)
    return get_doc_object(obj)


def _examples_text(name: str) -> str:
    return "\n".join(_sections(name)["Examples"])


def _misread_first_parameter(name: str, code: str, message: str) -> bool:
    """numpydoc drops a first parameter named ``cls`` or ``self`` from every signature (of a
    function or a class's constructor), as if it were a method's, and then calls its
    documentation unknown (PR02)."""
    obj = getattr(awlineage, name)
    if code != "PR02" or not (inspect.isfunction(obj) or inspect.isclass(obj)):
        return False
    first = next(iter(inspect.signature(obj).parameters), None)
    return first in ("cls", "self") and message == f"Unknown parameters {{'{first}'}}"


def _enum_call_parameters(name: str, code: str) -> bool:
    """numpydoc reads an enum's signature from ``EnumType.__call__`` (value, names, module,
    ...), which is not how an enum is used: its members are listed under Attributes."""
    obj = getattr(awlineage, name)
    return code in ("PR01", "PR02") and inspect.isclass(obj) and issubclass(obj, enum.Enum)


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_passes_numpydoc_validation(name: str) -> None:
    found = validate(_qualified(name))["errors"]
    errors = [f"{code} {message}" for code, message in found
              if code in CHECKED_CODES and not _misread_first_parameter(name, code, message)
              and not _enum_call_parameters(name, code)]
    assert not errors, f"awlineage.{name}: " + "; ".join(errors)


def _doctest_steps(examples: str) -> tuple[list[str], list[str]]:
    """The prompts (``>>>`` lines not skipped) and the expected-output lines of `examples`."""
    prompts, outputs = [], []
    for line in examples.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>"):
            if "+SKIP" not in stripped:
                prompts.append(stripped)
        elif stripped and not stripped.startswith("...") and prompts:
            outputs.append(stripped)
    return prompts, outputs


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_has_an_example_that_runs_and_shows_a_result(name: str) -> None:
    prompts, outputs = _doctest_steps(_examples_text(name))
    assert prompts, f"awlineage.{name}: Examples has no doctest that runs (none, or all +SKIP)"
    assert outputs, f"awlineage.{name}: Examples shows no result for the doctest to check"


def _is_function(obj: object) -> bool:
    return inspect.isfunction(obj) or inspect.ismethod(obj)


@pytest.mark.parametrize("name", [n for n in PUBLIC if _is_function(getattr(awlineage, n))])
def test_public_function_says_what_it_raises(name: str) -> None:
    raises = _sections(name)["Raises"]
    assert raises, f"awlineage.{name}: no Raises section"
    named = [entry.type for entry in raises]
    unknown = [t for t in named if not re.fullmatch(r"[A-Za-z_][\w.]*", t.strip())]
    assert not unknown, f"awlineage.{name}: Raises entries that name no exception: {unknown}"


@pytest.mark.parametrize("name", [n for n in PUBLIC
                                  if inspect.isclass(getattr(awlineage, n))
                                  and issubclass(getattr(awlineage, n), BaseException)])
def test_public_exception_example_raises_and_catches_it(name: str) -> None:
    examples = _examples_text(name)
    caught = re.search(rf"except\s+(\w+\.)*{name}\b", examples) or (
        "Traceback" in examples and re.search(rf"\b{name}\b", examples))
    assert caught, (f"awlineage.{name}: the example neither catches {name} "
                    "(except ...) nor shows its traceback")
