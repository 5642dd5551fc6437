"""Parameter overrides from text: ``STAGE.attribute=value`` (``awl make --set``) turned into
parameters objects for a `TargetProcessor`.

Each parameters object is the parameters class's defaults in code plus the values set, so the
same settings give the same object whatever was stored before (reproducible); the processor
stores it like any parameters object (a stored twin is reused), and the plan shows every
target it changes as out of date with the reason ``parameters changed``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from awlineage.errors import AwlError
from awlineage.persistence import DBObject, Kind
from awlineage.processing._planner import dependency_order

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


class ParameterOverrideError(AwlError, ValueError):
    """A ``STAGE.attribute=value`` setting that names no stage or attribute, or whose value
    does not fit the attribute; the message names the setting."""


@dataclass(frozen=True)
class ParameterSetting:
    """One ``STAGE.attribute=value`` setting, split but not yet checked.

    Attributes
    ----------
    stage
        The target class named (``ReducedScienceFrame``).
    attribute
        The attribute of its parameters class (``biassec``).
    text
        The value as written.
    """

    stage: str
    attribute: str
    text: str

    @classmethod
    def parse(cls, setting: str) -> ParameterSetting:
        """Split ``STAGE.attribute=value`` (the value may contain ``=`` and ``.``).

        Parameters
        ----------
        setting
            The text, e.g. ``"SourceList.threshold=3"``.

        Returns
        -------
        ParameterSetting
            Its three parts.

        Raises
        ------
        ParameterOverrideError
            Without ``=``, or without ``.`` before it.

        Examples
        --------
        >>> ParameterSetting.parse("SourceList.threshold=3")
        ParameterSetting(stage='SourceList', attribute='threshold', text='3')
        """
        name, equals, text = setting.partition("=")
        stage, dot, attribute = name.strip().rpartition(".")
        if not equals or not dot or not stage or not attribute:
            raise ParameterOverrideError(
                f"--set {setting!r}: write STAGE.attribute=value, e.g. "
                "ReducedScienceFrame.biassec=none")
        return cls(stage, attribute, text)

    def __str__(self) -> str:
        return f"{self.stage}.{self.attribute}={self.text}"


def override_parameters(cls: type, settings: Sequence[str | ParameterSetting],
                        class_named: Callable[[str], type] | None = None
                        ) -> tuple[DBObject, ...]:
    """Parameters objects for making `cls`, from ``STAGE.attribute=value`` settings.

    STAGE is a target class `cls` is made from (or `cls` itself): its short or qualified
    name. The value is read by the attribute's type: int, float, str as written, bool
    (true/false, yes/no, on/off, 1/0), datetime (ISO 8601); ``none`` (any case) is no value
    for an int, float, bool or datetime attribute, while a str attribute keeps the text (the
    stage decides what ``"none"`` means; an empty value is the empty string). One object per
    parameters class: the defaults in code plus its settings; target classes that share a
    parameters class share the object.

    Parameters
    ----------
    cls
        The process target class to make.
    settings
        ``STAGE.attribute=value`` texts (or parsed settings), in order.
    class_named
        Looks up a class by name (``Database.class_named``), to say why a known class that
        is not in the chain cannot be set; optional.

    Returns
    -------
    tuple of DBObject
        New (not stored) parameters objects, one per parameters class set, for
        ``TargetProcessor(parameters=...)``.

    Raises
    ------
    ParameterOverrideError
        A setting without ``=`` or ``.``; a STAGE that is no target class of the chain
        (listing those that are); an attribute its parameters class does not have (listing
        those it has), a list or link attribute; a value of the wrong type, or one the
        parameters class refuses; two different values for one attribute.

    Examples
    --------
    >>> from awlineage import DBObject, OnePer, Process, persistent
    >>> class DocOverrideRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocOverrideParameters(DBObject):
    ...     offset = persistent("Subtracted [ADU]", float, 100.0)
    ...     label = persistent("A name", str, "")
    >>> class DocOverrideReduced(Process):
    ...     targets = OnePer(DocOverrideRaw, link="raw")
    ...     raw = persistent("The raw frame", DocOverrideRaw, None)
    ...     process_params = persistent("Parameters", DocOverrideParameters, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - self.process_params.offset
    >>> [params] = override_parameters(DocOverrideReduced, ["DocOverrideReduced.offset=90"])
    >>> params.offset, params.label
    (90.0, '')
    >>> try:
    ...     override_parameters(DocOverrideReduced, ["DocOverrideReduced.offset=many"])
    ... except ParameterOverrideError as exc:
    ...     print(exc)
    --set DocOverrideReduced.offset=many: 'many' is not a float
    """
    stages = _stages(cls)
    values: dict[type, dict[str, tuple[Any, ParameterSetting]]] = {}
    for item in settings:
        setting = item if isinstance(item, ParameterSetting) else ParameterSetting.parse(item)
        target = _stage(setting, cls, stages, class_named)
        params_class: type[DBObject] = target.parameters_class()  # type: ignore[attr-defined]
        value = _value(setting, params_class)
        earlier = values.setdefault(params_class, {}).get(setting.attribute)
        if earlier is not None and earlier[0] != value:
            raise ParameterOverrideError(
                f"--set {setting}: {params_class.__name__}.{setting.attribute} is already set "
                f"by --set {earlier[1]}")
        values[params_class][setting.attribute] = (value, setting)
    made = []
    for params_class, chosen in values.items():
        try:
            made.append(params_class(**{name: v for name, (v, _) in chosen.items()}))
        except (AwlError, ValueError, TypeError) as exc:
            named = ", ".join(f"--set {s}" for _, s in chosen.values())
            raise ParameterOverrideError(f"{named}: {exc}") from None
    return tuple(made)


def _stages(cls: type) -> dict[str, type]:
    """Target classes of the chain by short and qualified name."""
    stages: dict[str, type] = {}
    for target in dependency_order(cls):
        stages.setdefault(target.__name__, target)
        stages[f"{target.__module__}.{target.__qualname__}"] = target
    return stages


def _stage(setting: ParameterSetting, cls: type, stages: dict[str, type],
           class_named: Callable[[str], type] | None) -> type:
    found = stages.get(setting.stage)
    if found is not None:
        return found
    chain = ", ".join(sorted({t.__name__ for t in stages.values()}))
    known = None
    if class_named is not None:
        try:
            known = class_named(setting.stage)
        except (AwlError, LookupError):
            known = None
    if known is not None and hasattr(known, "parameters_class"):
        why = f"{setting.stage} is a target class but {cls.__name__} is not made from it"
    elif known is not None:
        why = f"{setting.stage} is not a target class (stored data has no parameters)"
    else:
        why = f"no target class {setting.stage!r}"
    raise ParameterOverrideError(
        f"--set {setting}: {why}; the target classes {cls.__name__} is made from are: {chain}")


def _value(setting: ParameterSetting, params_class: type[DBObject]) -> Any:
    """The setting's text read by the attribute's type."""
    props = {name: p for name, p in params_class._properties.items() if not p.builtin}
    prop = props.get(setting.attribute)
    if prop is None and not props:
        raise ParameterOverrideError(
            f"--set {setting}: {setting.stage} declares no parameters (no process_params "
            "class of its own), so nothing of it can be set")
    if prop is None:
        raise ParameterOverrideError(
            f"--set {setting}: {params_class.__name__} (the parameters of {setting.stage}) has "
            f"no attribute {setting.attribute!r}; it has: {', '.join(sorted(props)) or 'none'}")
    if prop.kind is not Kind.DESCRIPTOR:
        raise ParameterOverrideError(
            f"--set {setting}: {params_class.__name__}.{setting.attribute} is a "
            f"{prop.kind.name.lower().replace('_', ' ')}: set it from Python "
            "(TargetProcessor(parameters=...))")
    text = setting.text.strip()
    kind = prop.type
    if kind is str:
        return setting.text
    if text.lower() == "none":
        return None
    readers: dict[Any, Callable[[str], Any]] = {
        bool: _boolean, int: int, float: float,
        datetime.datetime: _utc_datetime}
    reader = readers.get(kind)
    name = getattr(kind, "__name__", str(kind))
    if reader is None:
        raise ParameterOverrideError(f"--set {setting}: a {name} cannot be set from text; set "
                                     "it from Python (TargetProcessor(parameters=...))")
    try:
        return reader(text)
    except ValueError:
        raise ParameterOverrideError(f"--set {setting}: {setting.text!r} is not "
                                     f"{'an' if name[0] in 'aeiou' else 'a'} {name}") from None


def _utc_datetime(text: str) -> datetime.datetime:
    """ISO 8601; without an offset the time is UTC, as in queries and ``--bind``."""
    value = datetime.datetime.fromisoformat(text)
    return value.replace(tzinfo=datetime.UTC) if value.tzinfo is None else value


def _boolean(text: str) -> bool:
    if text.lower() not in _TRUE | _FALSE:
        raise ValueError(text)
    return text.lower() in _TRUE


__all__ = ["ParameterOverrideError", "ParameterSetting", "override_parameters"]
