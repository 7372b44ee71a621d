"""The workspace form ⇄ TcoRequest: one flat form (and URL query) for the inputs a budget owner
changes, mapped onto the request's nested shape (assumptions, profile) in one place.

Form fields: nodes, gpu_model, months, usage ("constant" or "schedule"), utilization (constant
usage), hours_per_day and days_per_week (schedule), discount_rate (percent a year), region,
as_of. Price overrides and the other assumptions do not fit a URL; they stay with a saved
scenario (fork it through the API to change them).
"""

from typing import Any
from urllib.parse import urlencode

from pydantic import ValidationError

from app.tco.schemas import Assumptions, ScheduleProfile, TcoRequest

FIELDS = ("nodes", "gpu_model", "months", "usage", "utilization", "hours_per_day",
          "days_per_week", "discount_rate", "region", "as_of")
# Request locations (last path element) → the form field showing them.
_FIELD_OF = {"discount_rate_annual": "discount_rate", "hours_per_day": "hours_per_day",
             "days_per_week": "days_per_week", "profile": "usage"}


class FormError(Exception):
    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


def defaults() -> dict[str, Any]:
    """What a blank form shows."""
    req = TcoRequest()
    schedule = ScheduleProfile()
    return {**req.model_dump(include={"nodes", "gpu_model", "months", "utilization", "region"}),
            "as_of": None, "usage": "constant", "hours_per_day": f"{schedule.hours_per_day:g}",
            "days_per_week": f"{schedule.days_per_week:g}",
            "discount_rate": f"{Assumptions().discount_rate_annual * 100:g}"}


def _percent(raw: str) -> float:
    try:
        return float(raw) / 100.0
    except ValueError:
        raise FormError({"discount_rate": "Input should be a valid number"}) from None


def request_from_form(raw: dict[str, str]) -> TcoRequest:
    """Validate the flat form; FormError maps every problem onto the field that shows it."""
    v = {k: x for k, x in raw.items() if k in FIELDS and x != ""}
    body: dict[str, Any] = {k: v[k] for k in ("nodes", "gpu_model", "months", "region", "as_of")
                            if k in v}
    if v.get("usage", "constant") == "schedule":
        body["profile"] = {"kind": "schedule", **{k: v[k] for k in ("hours_per_day",
                                                                     "days_per_week") if k in v}}
    elif "utilization" in v:
        body["utilization"] = v["utilization"]
    if "discount_rate" in v:
        body["assumptions"] = {"discount_rate_annual": _percent(v["discount_rate"])}
    try:
        return TcoRequest.model_validate(body)
    except ValidationError as exc:
        errors: dict[str, str] = {}
        for e in exc.errors():
            loc = [str(p) for p in e["loc"]]
            name = next((_FIELD_OF[p] for p in reversed(loc) if p in _FIELD_OF),
                        loc[0] if loc else "form")
            msg = "must be between 0 and 100 (% a year)" if name == "discount_rate" else e["msg"]
            errors.setdefault(name, msg)
        raise FormError(errors) from exc


def form_values(req: TcoRequest) -> dict[str, Any]:
    """The form fields holding `req` (what a fork and the live exports start from)."""
    out: dict[str, Any] = {**req.model_dump(mode="json", include={"nodes", "gpu_model", "months",
                                                                  "region", "as_of"}),
                           "discount_rate": f"{req.assumptions.discount_rate_annual * 100:g}"}
    if isinstance(req.profile, ScheduleProfile):
        out |= {"usage": "schedule", "hours_per_day": f"{req.profile.hours_per_day:g}",
                "days_per_week": f"{req.profile.days_per_week:g}"}
    else:
        out |= {"usage": "constant", "utilization": req.utilization}
    return out


def query(req: TcoRequest) -> str:
    """The workspace URL query holding these inputs."""
    values = form_values(req)
    return urlencode({k: values[k] for k in FIELDS if values.get(k) is not None})
