"""Planning by backward chaining: from the class asked for back to stored data, every Process
class in between is planned in dependency order, each with a few batched queries (its sources,
the newest stored version of every identity, their runs and links), never one per target.

A class whose targets are all up to date is planned on columns (`ColumnPlanner`): no object is
built for it unless someone asks to see its nodes. Any other class is planned on objects, with
the reasons for every target that is to be made or cannot be."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np

from awlineage.database import Database, identity_key, prefetch
from awlineage.errors import AwlError, QueryError
from awlineage.persistence import DBObject, Expression, is_stand_in, refuse_stand_in, root_class
from awlineage.processing._blocks import Block, ColumnBlock, NodeBlock, comparable
from awlineage.processing._causes import StaleCause
from awlineage.processing._causes import StaleCauseCategory as Category
from awlineage.processing._column_planner import ColumnPlanner, attributes_read, declared_by_name
from awlineage.processing._columns import newest_rows, stored_tables
from awlineage.processing._declarations import Blocker, Needs, OnePer, OnePerGroup
from awlineage.processing._evaluate import matches
from awlineage.processing._given_parameters import as_parameters, check_used
from awlineage.processing._lazy_plan import UpToDatePlan
from awlineage.processing._plan import (
    Plan,
    PlanNode,
    State,
    nodes_of,
    short_id,
)
from awlineage.processing._retracted import (
    RetractedObjects,
    reaching_retractions,
    wanted_retractions,
)
from awlineage.processing._retracted_links import retracted_links
from awlineage.processing._retracted_regions import RetractedRegions
from awlineage.processing._staleness import (
    key_reasons,
    link_reasons,
    member_reasons,
    run_reasons,
)
from awlineage.query import Query, select
from awlineage.retraction import Retraction, retraction_history
from awlineage.trace import Process, default_parameters, parameter_values


class ProcessingError(AwlError):
    """A target class's declarations do not let the processor plan it."""


def declaration(cls: type) -> OnePer | OnePerGroup:
    """The ``targets`` declaration of a process class (raises naming the class; a class read
    from the registry because its module cannot be imported here says so)."""
    if is_stand_in(cls):
        refuse_stand_in(cls, f"plan targets of {cls.__name__}")
    found = getattr(cls, "targets", None)
    if not isinstance(found, OnePer | OnePerGroup):
        raise ProcessingError(
            f"{cls.__name__} declares no targets, so the processor cannot tell which "
            f"{cls.__name__} objects to make; add e.g. targets = OnePer(RawFrame, link='raw')"
        )
    return found


def requirements(cls: type) -> dict[str, Needs]:
    """The ``requires`` declarations of a process class (attribute -> Needs)."""
    found = getattr(cls, "requires", None) or {}
    for attribute, need in found.items():
        prop = cls._properties.get(attribute)  # type: ignore[attr-defined]
        if prop is None or not prop.kind.is_link or not isinstance(need, Needs):
            raise ProcessingError(f"{cls.__name__}.requires[{attribute!r}] must be a Needs(...) "
                                  f"for a link attribute of {cls.__name__}")
    return found


def blockers(cls: type) -> dict[str, Blocker]:
    """The ``blocked_when`` declarations of a process class (reason in general -> check)."""
    found = getattr(cls, "blocked_when", None) or {}
    if not isinstance(found, dict) or not all(
            isinstance(k, str) and k and callable(v) for k, v in found.items()):
        raise ProcessingError(f"{cls.__name__}.blocked_when must map a reason in general "
                              "(text) to a check(target) returning why a target cannot be "
                              "made, or None")
    return found


def is_planned(cls: type) -> bool:
    """True for process classes the processor can make (they declare their targets)."""
    return isinstance(cls, type) and issubclass(cls, Process) and \
        isinstance(getattr(cls, "targets", None), OnePer | OnePerGroup)


def dependency_order(cls: type) -> list[type]:
    """A process class and every planned class it depends on, dependencies first.

    Parameters
    ----------
    cls : type
        A `Process` class.

    Returns
    -------
    list of type
        `cls` last, each class after the classes it depends on.

    Raises
    ------
    ProcessingError
        When the declarations make a cycle.
    """
    order: list[type] = []
    visiting: list[type] = []

    def visit(current: type) -> None:
        if current in order:
            return
        if current in visiting:
            cycle = " -> ".join(c.__name__ for c in [*visiting, current])
            raise ProcessingError(f"dependency cycle: {cycle}")
        visiting.append(current)
        upstream = [declaration(current).source, *(n.cls for n in requirements(current).values())]
        for dependency in upstream:
            if is_planned(dependency):
                visit(dependency)
        visiting.pop()
        order.append(current)

    declaration(cls)
    visit(cls)
    return order


class Planner:
    """Plans targets against one database.

    Parameters
    ----------
    db
        The database holding stored data and earlier targets.
    parameters
        Parameters objects to use instead of the defaults in code, one per parameters class.
    columnar
        Plan classes whose targets are all up to date on columns (see the module); False
        plans every class on objects (the same decisions, slower).
    """

    def __init__(self, db: Database, parameters: DBObject | Iterable[DBObject] = (),
                 columnar: bool = True) -> None:
        self.db = db
        self.parameters = {type(p): p for p in as_parameters(parameters)}
        self.columnar = columnar
        self.blocks: dict[type, Block] = {}
        self._stored: dict[type, Block] = {}
        self._reads: dict[type, set[str]] = {}
        self._indexes: dict[tuple[int, tuple[str, ...]], dict[tuple[Any, ...],
                                                             list[PlanNode]]] = {}
        self._retracted_indexes: dict[tuple[int, tuple[str, ...]],
                                      dict[tuple[Any, ...], list[PlanNode]]] = {}
        self._retractions: RetractedObjects | None = None
        self._region_retractions: RetractedRegions | None = None
        self._records: list[Retraction] | None = None
        self._other_links: dict[type, dict[int, list[tuple[str, int]]]] = {}

    @property
    def retracted(self) -> RetractedObjects:
        """The whole-object retractions in force, read once (one statement) when first asked."""
        if self._retractions is None:
            self._retractions = RetractedObjects(self._retraction_records())
        return self._retractions

    @property
    def retracted_regions(self) -> RetractedRegions:
        """The region retractions recorded (read with the whole-object ones)."""
        if self._region_retractions is None:
            self._region_retractions = RetractedRegions(self.db, self._retraction_records())
        return self._region_retractions

    def other_retracted_links(self, cls: type) -> dict[int, list[tuple[str, int]]]:
        """Stored target id of `cls` -> (attribute, retracted object id) for each link its
        declarations do not name (its parameters object, links set by its make) and each
        input its run recorded that is retracted now (`retracted_links`; read once per
        class, nothing when no retraction is in force)."""
        found = self._other_links.get(cls)
        if found is None:
            found = {}
            if self.retracted:
                spec = declaration(cls)
                found = retracted_links(self.db, cls, self.retracted.since(),
                                        [spec.link, *requirements(cls)])
            self._other_links[cls] = found
        return found

    def _retraction_records(self) -> list[Retraction]:
        """Every retraction record, oldest first: one statement, once per planner."""
        if self._records is None:
            self._records = retraction_history(database=self.db)
        return self._records

    # -- the plan -------------------------------------------------------------------------
    def plan(self, cls: type | str, where: Expression | str | None = None, *, force: bool = False,
             force_upstream: bool = False,
             retracted: bool | int | Retraction | None = None) -> Plan:
        """Plan every target of `cls` (those meeting `where`) and all they depend on.

        Parameters
        ----------
        where
            A condition on the targets' attributes (text or expression).
        force
            Make the selected targets even when up to date.
        force_upstream
            Make everything they depend on, too.
        retracted
            Only the targets a retraction makes red or blocks (True: any; a `Retraction`,
            its id, or the id of a retracted object: that one); None for every target.
        """
        wanted = None if retracted is None else \
            wanted_retractions(self._retraction_records(), retracted)
        cls = self.target_class(cls)
        if is_stand_in(cls):
            refuse_stand_in(cls, f"plan targets of {cls.__name__}")
        if isinstance(where, str):
            from awlineage.query import parse_query

            where = parse_query(where, cls, self.db.class_named)
        if where is not None:
            _refuse_other_class(cls, where)
        order = self.plan_classes(cls, force_upstream=force_upstream)
        check_used(self.parameters.values(), cls, order)
        block = self.blocks[cls]
        if where is None and not force and retracted is None and isinstance(block, ColumnBlock):
            blocks = [self._block(c) for c in self._upstream(order)]
            if all(isinstance(b, ColumnBlock) for b in blocks):
                return UpToDatePlan(block, blocks)
        selected = [n for n in block.all_nodes() if matches(where, n.obj)]
        if retracted is not None:
            selected = reaching_retractions(selected, wanted)
        for node in selected:
            if force and node.state is not State.BLOCKED and node.state is not State.RED:
                self._make_red(node, [StaleCause(Category.FORCED, "forced by the user")])
        return Plan(selected, reachable(selected), _asked(where, retracted))

    def target_class(self, cls: type | str) -> type:
        """`cls`, or the class of that name (qualified, or short when one class has it) as
        ``awl make`` finds it; raises for anything else."""
        if isinstance(cls, str):
            return self.db.class_named(cls.strip())
        if not isinstance(cls, type):
            raise ProcessingError(f"a process class (or its name) is needed to plan, got "
                                  f"{type(cls).__name__} {cls!r:.40}")
        return cls

    def plan_classes(self, cls: type, *, force_upstream: bool = False) -> list[type]:
        """Plan `cls` and every class it depends on, each unless planned already, and
        return them in dependency order: `plan` without choosing targets, so nothing is
        built for a class planned on columns (`existing_states` answers from its ids)."""
        order = dependency_order(cls)
        for current in order:
            for upstream, names in attributes_read(declaration(current),
                                                   requirements(current)).items():
                self._reads.setdefault(upstream, set()).update(names)
        for current in order:
            if current not in self.blocks:
                self.blocks[current] = self._plan_block(current, force_upstream)
        return order

    @property
    def nodes(self) -> dict[type, list[PlanNode]]:
        """Class -> the nodes of every target of it planned so far (built if need be)."""
        return {cls: block.all_nodes() for cls, block in self.blocks.items()}

    def existing_states(self, classes: Iterable[type] | None = None
                        ) -> dict[int, tuple[State, list[StaleCause]]]:
        """Stored object id -> the state and reasons of the target it is the existing
        version of, for the classes planned so far (or those of `classes` among them, in
        the order given), a later class's answer winning as in `nodes`. A class planned on
        columns is all green, answered from its ids without building its nodes."""
        found: dict[int, tuple[State, list[StaleCause]]] = {}
        for cls in self.blocks if classes is None else classes:
            block = self.blocks[cls]
            if isinstance(block, ColumnBlock):
                found.update((oid, (State.GREEN, [])) for oid in block.ids.tolist())
                continue
            for node in block.all_nodes():
                if node.existing is not None:
                    found[node.existing.object_id] = (node.state, node.reasons)
        return found

    @staticmethod
    def _upstream(order: list[type]) -> list[type]:
        """Every class the classes of `order` are made from (stored ones included), in
        dependency order, each once."""
        found: list[type] = []
        for cls in order:
            for upstream in [declaration(cls).source,
                             *(n.cls for n in requirements(cls).values()), cls]:
                if upstream not in found:
                    found.append(upstream)
        return found

    def parameters_for(self, cls: type) -> DBObject:
        """The parameters object targets of `cls` are made with."""
        wanted = cls.parameters_class()  # type: ignore[attr-defined]
        return self.parameters.get(wanted) or default_parameters(cls)

    # -- one class ------------------------------------------------------------------------
    def _plan_block(self, cls: type, force: bool) -> Block:
        """The class on columns when it can be (see the module), else on objects."""
        if self.columnar and not force:
            spec, needs = declaration(cls), requirements(cls)
            params = self.parameters_for(cls)
            # a retracted parameters object blocks every target: the object planner says so
            identity = cls.identity  # type: ignore[attr-defined]
            if declared_by_name(spec, needs, blockers(cls), identity) \
                    and params.object_id not in self.retracted:
                planner = ColumnPlanner(self.db, cls, spec, needs, params,
                                        parameter_values(params),
                                        cls.class_code_version(),  # type: ignore[attr-defined]
                                        self._reads.get(cls, set()))
                block = planner.plan(self._block(spec.source),
                                     {name: self._block(need.cls)
                                      for name, need in needs.items()})
                # a retracted target, or one that reaches a retracted object through any
                # link or input of its run, is not reused: the object planner says why
                if block is not None and not self.retracted.any_of(block.ids) \
                        and not self.retracted_regions.any_of(block.ids) \
                        and not _any_in(block.ids, self.other_retracted_links(cls)):
                    return block
        return NodeBlock(cls, self._plan_class(cls, force))

    def _block(self, cls: type) -> Block:
        """The block of a class: planned targets, or the stored objects of a class the
        processor does not make (the newest versions)."""
        if is_planned(cls):
            return self.blocks[cls]
        found = self._stored.get(cls)
        if found is None:
            if self.columnar and stored_tables(self.db, cls) is not None:
                rows = newest_rows(self.db, cls, sorted(self._reads.get(cls, ())),
                                   newest=bool(cls.identity))  # type: ignore[attr-defined]
                found = ColumnBlock(self.db, cls, rows, stored=True, retracted=self.retracted)
            else:
                query: Query[DBObject] = select(cls, database=self.db)
                objects = (query.newest() if cls.identity else query).all()  # type: ignore[attr-defined]
                retracted = self.retracted
                found = NodeBlock(cls, [PlanNode(cls, o, o, State.BLOCKED,
                                                 [retracted.own_cause(o.object_id)],
                                                 stored=True)
                                        if o.object_id in retracted else
                                        PlanNode(cls, o, o, State.GREEN, stored=True)
                                        for o in objects], stored=True)
            self._stored[cls] = found
        return found

    def _plan_class(self, cls: type, force: bool) -> list[PlanNode]:
        spec = declaration(cls)
        needs = requirements(cls)
        params = self.parameters_for(cls)
        expected = json.loads(parameter_values(params))
        checks = blockers(cls)
        existing = self._existing(cls, [spec.link, *needs])
        nodes = []
        for candidate, sources, left_out in self._candidates(cls, spec):
            candidate.process_params = params
            node = self._node(cls, candidate, sources, spec, needs, existing, expected, checks,
                              left_out)
            if force and node.state is not State.BLOCKED and node.state is not State.RED:
                self._make_red(node, [StaleCause(Category.FORCED, "forced by the user (upstream)")])
            nodes.append(node)
        return nodes

    def _node(self, cls: type, candidate: DBObject, sources: PlanNode | list[PlanNode],
              spec: OnePer | OnePerGroup, needs: dict[str, Needs],
              existing: dict[str | None, DBObject], expected: dict[str, Any],
              checks: dict[str, Blocker], left_out: list[PlanNode]) -> PlanNode:
        dependencies: dict[str, PlanNode | list[PlanNode] | None] = {spec.link: sources}
        blocked: list[StaleCause] = []
        for attribute, need in needs.items():
            chosen = self._choose(candidate, need)
            dependencies[attribute] = chosen
            setattr(candidate, attribute, None if chosen is None else chosen.obj)
            if chosen is not None:
                continue
            # an optional dependency is left out only when there is none: one that was
            # retracted blocks the target rather than being dropped without a word
            retracted = self._retracted_choice(candidate, need)
            if need.optional and retracted is None:
                continue
            wanted = ", ".join(f"{c}={getattr(candidate, t)!r}" for t, c in need.match_pairs())
            general = f"{attribute}: no {need.cls.__name__} can be found or made"
            why = f"; {retracted.reason}" if retracted else ""
            blocked.append(StaleCause(Category.BLOCKED, f"{general} ({wanted}){why}",
                                      attribute, general=general,
                                      retraction=retracted.retraction if retracted else None))
        blocked = self._checked(cls, candidate, checks) + blocked
        params = candidate.__dict__.get("process_params")
        if params is not None and params.object_id in self.retracted:
            # made with it, the target would be what the retraction says is wrong
            blocked.insert(0, self.retracted.parameters_cause(params))
        linked_by = {id(node): attribute for attribute, value in reversed(dependencies.items())
                     for node in (value if isinstance(value, list) else [value])}
        for dependency in [*nodes_of(dependencies), *([] if sources else left_out)]:
            if dependency.state is State.BLOCKED:
                attribute = linked_by.get(id(dependency), spec.link)
                own = self.retracted.is_retracted_node(dependency.reasons)
                if own is not None:
                    blocked.append(StaleCause(Category.BLOCKED_BY, f"{attribute}: {own.reason}",
                                              attribute, general=f"a {dependency.cls.__name__}"
                                              " it needs was retracted",
                                              retraction=own.retraction))
                    continue
                blocked.append(StaleCause(
                    Category.BLOCKED_BY, f"{describe(dependency)} cannot be made",
                    attribute,
                    general=f"a {dependency.cls.__name__} it needs cannot be made"))
        stored = existing.get(identity_key(candidate))
        if blocked:
            return PlanNode(cls, candidate, stored, State.BLOCKED, blocked, dependencies,
                            candidate=candidate, left_out=left_out)
        if stored is None:
            reason = StaleCause(Category.MISSING, f"no {cls.__name__} with {_identity(candidate)} "
                                            "is stored yet")
            return PlanNode(cls, candidate, None, State.RED, [reason], dependencies,
                            candidate=candidate, left_out=left_out)
        superseded: dict[str, DBObject] = {}
        reasons = run_reasons(cls, stored, expected)
        if isinstance(spec, OnePer):
            # a OnePer target has one source node
            reasons += link_reasons(spec.link, getattr(stored, spec.link),
                                    cast(PlanNode, sources), None, superseded)
        else:
            reasons += member_reasons(spec.link, getattr(stored, spec.link),
                                      sources)  # type: ignore[arg-type]
            reasons += key_reasons([name for name, _ in spec.key_functions()
                                    if name not in cls.identity], stored, candidate)  # type: ignore[attr-defined]
        for attribute, need in needs.items():
            chooser = getattr(need.choose, "description", None)
            reasons += link_reasons(attribute, getattr(stored, attribute),
                                    dependencies[attribute], chooser,  # type: ignore[arg-type]
                                    superseded)
        if self.retracted_regions:
            reasons = self.retracted_regions.causes(stored, [spec.link, *needs]) + reasons
        if self.retracted:
            causes = self.retracted.link_causes(stored, [spec.link, *needs])
            named = {c.retraction for c in causes}
            for attribute, object_id in self.other_retracted_links(cls).get(stored.object_id,
                                                                            []):
                cause = self.retracted.link_cause(attribute, object_id)
                if cause.retraction not in named:  # one cause per retracted object
                    named.add(cause.retraction)
                    causes.append(cause)
            reasons = causes + reasons
            if not reasons and stored.object_id in self.retracted:
                # reused it would be; remade, the same as the one retracted
                return PlanNode(cls, candidate, stored, State.BLOCKED,
                                [self.retracted.own_cause(stored.object_id)], dependencies,
                                candidate=candidate, left_out=left_out)
        state = State.RED if reasons else State.GREEN
        return PlanNode(cls, candidate if reasons else stored, stored, state, reasons,
                        dependencies, superseded, candidate=candidate, left_out=left_out)

    @staticmethod
    def _checked(cls: type, candidate: DBObject, checks: dict[str, Blocker]
                 ) -> list[StaleCause]:
        """The reasons the class's ``blocked_when`` checks give for `candidate`."""
        found = []
        for general, check in checks.items():
            try:
                why = check(candidate)
            except Exception as error:
                raise ProcessingError(f"{cls.__name__}.blocked_when[{general!r}] failed on "
                                      f"{cls.__name__} ({_identity(candidate)}): "
                                      f"{type(error).__name__}: {error}") from error
            if why:
                found.append(StaleCause(Category.BLOCKED, str(why), general=general))
        return found

    @staticmethod
    def _make_red(node: PlanNode, reasons: list[StaleCause]) -> None:
        """Turn a reused node into one that will be made (forced)."""
        node.obj = node.candidate or node.obj
        node.state = State.RED
        node.result_id = None
        node.reasons = reasons + node.reasons

    # -- candidates -----------------------------------------------------------------------
    def _candidates(self, cls: type, spec: OnePer | OnePerGroup
                    ) -> list[tuple[DBObject, PlanNode | list[PlanNode], list[PlanNode]]]:
        """(new target, its source node or member nodes, members left out) per target."""
        sources = self._pool(spec.source)
        if spec.where is not None:
            sources = [s for s in sources if spec.where(s.obj)]
        if isinstance(spec, OnePer):
            return [(cls(**{name: getattr(s.obj, name) for name in spec.copy},
                         **{spec.link: s.obj}), s, []) for s in sources]
        keys = spec.key_functions()
        groups: dict[tuple[Any, ...], list[PlanNode]] = {}
        for source in sources:
            groups.setdefault(tuple(f(source.obj) for _, f in keys), []).append(source)
        found: list[tuple[DBObject, PlanNode | list[PlanNode], list[PlanNode]]] = []
        for key, members in groups.items():
            left_out = [m for m in members if m.state is State.BLOCKED] if spec.partial else []
            members = [m for m in members if m.state is not State.BLOCKED] if left_out \
                else members
            found.append((cls(**dict(zip((name for name, _ in keys), key, strict=True)),
                              **{spec.link: [m.obj for m in members]}), members, left_out))
        return found

    def _pool(self, cls: type) -> list[PlanNode]:
        """The nodes a dependency of class `cls` is chosen from: planned targets, or stored
        objects (the newest versions) for classes the processor does not make."""
        return self._block(cls).all_nodes()

    def _existing(self, cls: type, links: list[str]) -> dict[str | None, DBObject]:
        """The newest stored version of every identity of `cls`, with its run and links
        loaded in batches."""
        query: Query[DBObject] = select(cls, database=self.db)
        objects = [o for o in query.newest().all() if type(o) is cls]
        for name in ["process_run", *links]:
            prefetch(self.db, objects, cls._properties[name])  # type: ignore[attr-defined]
        return {identity_key(o): o for o in objects}

    def _choose(self, target: DBObject, need: Needs) -> PlanNode | None:
        pairs = need.match_pairs()
        index_key = (id(need), tuple(c for _, c in pairs))
        index = self._indexes.get(index_key)
        if index is None:
            index = self._indexes[index_key] = {}
            retracted_index = self._retracted_indexes[index_key] = {}
            for node in self._pool(need.cls):
                if node.state is State.BLOCKED:
                    if self.retracted.is_retracted_node(node.reasons) is not None:
                        key = tuple(comparable(getattr(node.obj, c)) for _, c in pairs)
                        retracted_index.setdefault(key, []).append(node)
                    continue
                if not need.on_the_fly and node.state is State.RED and not node.stored:
                    continue
                key = tuple(comparable(getattr(node.obj, c)) for _, c in pairs)
                index.setdefault(key, []).append(node)
        return _chosen(index, target, need, pairs)

    def _retracted_choice(self, target: DBObject, need: Needs) -> StaleCause | None:
        """When `need` finds nothing for `target`: the retraction of the candidate it would
        have chosen were retracted ones allowed, or None."""
        pairs = need.match_pairs()
        index = self._retracted_indexes.get((id(need), tuple(c for _, c in pairs)))
        winner = _chosen(index, target, need, pairs) if index else None
        return None if winner is None else self.retracted.is_retracted_node(winner.reasons)


def _chosen(index: dict[tuple[Any, ...], list[PlanNode]], target: DBObject, need: Needs,
            pairs: Sequence[tuple[str, str]]) -> PlanNode | None:
    """The node `need` chooses for `target` among those of `index` that match it on `pairs`
    (target attribute, candidate attribute) and pass its ``where``; None when none does."""
    bucket = index.get(tuple(comparable(getattr(target, t)) for t, _ in pairs), [])
    if need.where is not None:
        bucket = [n for n in bucket if need.where(target, n.obj)]
    if not bucket:
        return None
    by_object = {id(n.obj): n for n in bucket}
    winner = need.choose(target, [n.obj for n in bucket])
    return None if winner is None else by_object[id(winner)]


def _asked(where: Expression | None, retracted: bool | int | Retraction | None
           ) -> tuple[str, ...]:
    """How `plan` chose its targets besides their class, as ``awl make`` options."""
    found = () if where is None else ("--where",)
    if retracted is True:
        return (*found, "--retracted")
    if retracted is not None:
        which = retracted.object_id if isinstance(retracted, Retraction) else retracted
        return (*found, f"--affected-by {which}")
    return found


def _refuse_other_class(cls: type, where: Expression) -> None:
    """Raise when `where` is a condition on another class than `cls` (or a base of it): its
    attributes would be read on the targets by name, whatever class they were named on."""
    if not isinstance(where, Expression):
        raise QueryError(f"plan({cls.__name__}, where): where must be a condition (text or "
                         f"expression), got {type(where).__name__}")
    root = root_class(where)
    if not issubclass(cls, root):
        raise QueryError(f"plan({cls.__name__}, where): the condition is on {root.__name__}, "
                         f"not on {cls.__name__}; a condition on the targets names their "
                         f"attributes ({cls.__name__}.name == ..., or name == ... alone)")


def _any_in(ids: Any, owners: dict[int, list[tuple[str, int]]]) -> bool:
    """Whether any of `ids` (an int64 array) is a key of `owners`."""
    return bool(owners) and bool(np.isin(ids, np.fromiter(owners, np.int64, len(owners))).any())


def _identity(obj: DBObject) -> str:
    names = type(obj).identity
    parts = []
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, DBObject):
            value = f"{type(value).__name__} {short_id(value.object_id)}"
        elif hasattr(value, "isoformat"):
            value = value.isoformat()
        else:
            value = repr(value)
        parts.append(f"{name}={value}")
    return ", ".join(parts) or "this identity"


def describe(node: PlanNode) -> str:
    """``ReducedScienceFrame (raw=RawScienceFrame 123)``."""
    return f"{node.cls.__name__} ({_identity(node.obj)})"


def reachable(selected: list[PlanNode]) -> list[PlanNode]:
    """Every node reachable from `selected`, dependencies before dependants."""
    order: list[PlanNode] = []
    seen: set[int] = set()
    for root in selected:
        stack: list[tuple[PlanNode, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((d, False) for d in [*node.dependency_nodes(), *node.left_out]
                         if id(d) not in seen)
    return order
