"""``/home/plan``: what the target processor would make now, per process class: how many of
its targets are green, red, orange or blocked, and the most common reasons. Every stored
process class is planned by one `Planner` (which shares what classes have in common); it only
reads. The dashboard fetches this after it has loaded, since planning the demo's seven classes
takes about a second."""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from awlineage import Database, Process
from awlineage.errors import AwlError
from awlineage.persistence import qualified_name, short_name
from awlineage.processing import Plan, Planner, State
from webviewer._classes import class_url
from webviewer._plan import MARKS
from webviewer._respond import Page, page
from webviewer._viewer import Viewer

TOP_REASONS = 3
"""Reasons shown per class, the most common first."""


def process_classes(db: Database) -> list[str]:
    """The stored process classes, by qualified name."""
    target = qualified_name(Process)
    return sorted(name for name, record in db.registered_classes().items()
                  if target in record.bases)


def class_summary(plan: Plan, cls: type) -> dict[str, Any]:
    """The counts of `cls`'s targets per state in `plan`, and its most common reasons."""
    counts = plan.class_counts().get(cls.__name__, dict.fromkeys(State, 0))
    reasons: list[dict[str, Any]] = [{"kind": "make", "reason": reason, "count": count}
               for (name, reason), count in plan.causes().items() if name == cls.__name__]
    reasons += [{"kind": "blocked", "reason": reason, "count": count, "example": first}
                for (name, reason), (count, first) in plan.blocked_causes().items()
                if name == cls.__name__]
    reasons.sort(key=lambda r: -int(r["count"]))
    return {"counts": {state.value: counts.get(state, 0) for state in State},
            "reasons": reasons[:TOP_REASONS], "more_reasons": max(0, len(reasons) - TOP_REASONS)}


def plan_summary(db: Database) -> list[dict[str, Any]]:
    """One entry per stored process class: its plan's counts and reasons, or why it cannot
    be planned here."""
    planner = Planner(db)
    found = []
    for name in process_classes(db):
        entry: dict[str, Any] = {"class": name, "short_name": short_name(name),
                                 "class_url": class_url(name), "plan_url": f"/plan/{name}"}
        try:
            cls = db.class_named(name)
            entry |= class_summary(planner.plan(cls), cls)
        except AwlError as exc:  # a class this process cannot plan (a stand-in, say)
            entry["error"] = str(exc).splitlines()[0]
            planner = Planner(db)  # start afresh: the failed plan may have left blocks half-built
        found.append(entry)
    return found


@page
def home_plan(request: Request, viewer: Viewer) -> Page:
    """``/home/plan``: the plan summary of every process class (JSON for the dashboard)."""
    started = time.perf_counter()
    classes = plan_summary(viewer.database)
    seconds = time.perf_counter() - started
    data = {"classes": classes, "states": [s.value for s in State],
            "marks": {s.value: m for s, m in MARKS.items()}, "seconds": round(seconds, 3)}
    return Page("home_plan.html", data, title="What the processor would make now")


routes = [Route("/home/plan", home_plan, methods=["GET"])]
