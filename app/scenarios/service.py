"""Scenario use cases: save (pinning the price date), read, fork, compute, seed the examples."""

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.errors import Conflict, InvalidInput, NotFound
from app.planner.service import make_plan
from app.pricing.repository import known_at
from app.scenarios import repository
from app.scenarios.examples import EXAMPLES, Example
from app.scenarios.models import Scenario
from app.scenarios.report import ExportFile, ExportFormat, ReportMeta
from app.scenarios.report import export as export_report
from app.scenarios.schemas import (
    INPUT_MODELS,
    UPGRADERS,
    ScenarioCreate,
    ScenarioFork,
    ScenarioInputs,
    ScenarioLinks,
    ScenarioOut,
    ScenarioResult,
)
from app.tco.schemas import TcoResponse
from app.tco.service import compute_tco
from app.throughput.service import compute_kv_cache, compute_throughput

# kind -> the computation behind that kind's API (the same numbers as the API returns).
COMPUTE: dict[str, Callable[[Session, Any], ScenarioResult]] = {
    "tco": compute_tco,
    "throughput": lambda _, req: compute_throughput(req),
    "plan": make_plan,
    "kv_cache": lambda _, req: compute_kv_cache(req),
}


def new_share_id() -> str:
    """128 random bits, URL-safe (22 characters): unguessable, so a link is the capability."""
    return secrets.token_urlsafe(16)


def invalid_input(exc: ValidationError, prefix: str = "") -> InvalidInput:
    """A pydantic error as InvalidInput naming every offending field (dotted, under `prefix`)."""
    errors = [{"field": ".".join(p for p in (prefix, *map(str, e["loc"])) if p),
               "reason": e["msg"]} for e in exc.errors()]
    err = InvalidInput(errors[0]["field"], errors[0]["reason"])
    err.errors = errors
    err.detail = "; ".join(f"{e['field']}: {e['reason']}" for e in errors)
    return err


def save(session: Session, new: ScenarioCreate, *, today: date | None = None,
         share_id: str | None = None, forked_from: Scenario | None = None) -> Scenario:
    """Store an immutable scenario. A blank price date is pinned to `today` (UTC by default):
    that pin is what keeps a shared link's numbers fixed after prices are refreshed."""
    priced = "as_of" in type(new.inputs).model_fields  # throughput and KV cache use no prices
    as_of = getattr(new.inputs, "as_of", None) or today or datetime.now(UTC).date()
    inputs = new.inputs.model_copy(update={"as_of": as_of}) if priced else new.inputs
    return repository.add(session, Scenario(
        share_id=share_id or new_share_id(), name=new.name.strip() or "Untitled scenario",
        kind=new.kind, schema_version=INPUT_MODELS[new.kind].version,
        inputs=inputs.model_dump(mode="json"), as_of=as_of, created_at=datetime.now(UTC),
        forked_from=forked_from,
    ))


def get(session: Session, share_id: str) -> Scenario:
    found = repository.get_by_share_id(session, share_id)
    if found is None:
        raise NotFound(f"no scenario with share id {share_id!r}")
    return found


def inputs_of(scenario: Scenario) -> ScenarioInputs:
    """The stored inputs as the current input model, upgrading older payload versions."""
    spec = INPUT_MODELS[scenario.kind]
    payload, version = dict(scenario.inputs), scenario.schema_version
    while version < spec.version:
        payload = UPGRADERS[(scenario.kind, version)](payload)
        version += 1
    try:
        model: BaseModel = spec.model.model_validate(payload)
    except ValidationError as exc:  # a stored payload the current model rejects: add an upgrader
        raise Conflict(f"scenario {scenario.share_id} was saved with {scenario.kind} inputs "
                       f"v{scenario.schema_version} that the current model rejects: "
                       f"{invalid_input(exc).detail}") from exc
    assert isinstance(model, ScenarioInputs)
    return model


@contextmanager
def pinned(scenario: Scenario) -> Iterator[None]:
    """Within this block every price read is as this store knew it when the scenario was
    saved (its inputs pin the effective date): the one mechanism that keeps a link's numbers
    fixed, whatever the kind and whichever service reads the prices."""
    with known_at(scenario.created_at):
        yield


def compute(session: Session, scenario: Scenario) -> ScenarioResult:
    """The saved numbers: prices in force on the pinned date, as known when it was saved."""
    with pinned(scenario):
        return COMPUTE[scenario.kind](session, inputs_of(scenario))


def fork(session: Session, share_id: str, change: ScenarioFork,
         today: date | None = None) -> Scenario:
    """A new scenario from a saved one, with `change` merged over its name and inputs."""
    original = get(session, share_id)
    merged = {**inputs_of(original).model_dump(mode="json"), **change.inputs}
    try:
        inputs = INPUT_MODELS[original.kind].model.model_validate(merged)
    except ValidationError as exc:
        raise invalid_input(exc, "inputs") from exc
    name = change.name or f"{original.name} (fork)"[: 120]
    return save(session, ScenarioCreate(name=name, kind=original.kind, inputs=inputs),
                today=today, forked_from=original)


def links(share_id: str) -> ScenarioLinks:
    return ScenarioLinks(page=f"/s/{share_id}", api=f"/api/v1/scenarios/{share_id}",
                         export_csv=f"/s/{share_id}/export.csv",
                         export_xlsx=f"/s/{share_id}/export.xlsx")


def to_out(session: Session, scenario: Scenario) -> ScenarioOut:
    parent = scenario.forked_from
    return ScenarioOut(
        share_id=scenario.share_id, name=scenario.name, kind=scenario.kind,
        schema_version=scenario.schema_version, as_of=scenario.as_of,
        created_at=scenario.created_at, forked_from=parent.share_id if parent else None,
        inputs=inputs_of(scenario), result=compute(session, scenario),
        links=links(scenario.share_id),
    )


def seed_examples(session: Session) -> int:
    """Save the gallery's examples that are missing; returns how many were added. Idempotent,
    and safe when two processes start at once (the unique share id decides)."""
    added = 0
    for ex in EXAMPLES:
        if repository.get_by_share_id(session, ex.share_id) is not None:
            continue
        try:
            with session.begin_nested():
                save(session, ScenarioCreate(name=ex.name, kind=ex.kind, inputs=ex.inputs),
                     share_id=ex.share_id)
            added += 1
        except IntegrityError:
            pass  # another process seeded it first
    return added


def examples(session: Session) -> list[tuple[Example, Scenario]]:
    """(definition, saved scenario) for every example present in the database."""
    saved = {s.share_id: s for s in
             repository.list_by_share_ids(session, [e.share_id for e in EXAMPLES])}
    return [(e, saved[e.share_id]) for e in EXAMPLES if e.share_id in saved]


def export(session: Session, scenario: Scenario, fmt: ExportFormat,
           base_url: str = "") -> ExportFile:
    """The scenario's report as a file; `base_url` makes the link in it absolute."""
    meta = ReportMeta(title=scenario.name, link=base_url + links(scenario.share_id).page,
                      created_at=scenario.created_at)
    result = compute(session, scenario)
    if not isinstance(result, TcoResponse):
        raise InvalidInput("share_id", f"exports hold a cost comparison; this is a "
                           f"{scenario.kind} scenario (its numbers are in GET "
                           f"{links(scenario.share_id).api})")
    return export_report(result, meta, fmt)
