"""The trajectory list's filters: parsed from a query string, turned into a bound WHERE clause."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal
from urllib.parse import urlencode

PAGE_SIZE = 50  # trajectories per list page
MAX_QUERY = 200  # characters of a full-text query

Outcome = Literal["passed", "failed"]

# filter name -> the viewer_index column it matches exactly (None: no filter)
_COLUMNS = {
    "domain": "domain", "agent": "agent", "user": "user", "style": "style", "fault": "fault_kind",
    "termination": "termination", "decision": "decision", "run": "run_id", "blueprint": "blueprint_id",
}


@dataclass(frozen=True)
class Filters:
    """What the list shows. Every value is matched through a bound parameter, never as SQL."""

    domain: str | None = None
    agent: str | None = None
    user: str | None = None  # the user simulator
    style: str | None = None  # the persona's style (how the user behaves)
    fault: str | None = None
    termination: str | None = None
    decision: str | None = None  # the latest selection's decision
    run: str | None = None
    blueprint: str | None = None
    outcome: Outcome | None = None
    check: str | None = None  # a check the trajectory failed
    q: str | None = None  # full-text search over messages
    page: int = 1

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> Filters:
        """From a query string: blanks and unknown names are ignored, a bad page is page 1."""
        values: dict[str, Any] = {}
        for name in (*_COLUMNS, "check"):
            value = (params.get(name) or "").strip()
            if value:
                values[name] = value
        outcome = params.get("outcome")
        if outcome in ("passed", "failed"):
            values["outcome"] = outcome
        q = " ".join((params.get("q") or "").split())[:MAX_QUERY]
        if q:
            values["q"] = q
        try:
            values["page"] = max(1, int(params.get("page") or 1))
        except ValueError:
            values["page"] = 1
        return cls(**values)

    def where(self, search_key: str | None = None) -> tuple[str, list[Any]]:
        """The WHERE clause over ``viewer_index`` and its parameters; ``search_key`` is the
        key under which the snapshot stored this filter's full-text hits."""
        clauses: list[str] = []
        params: list[Any] = []
        for name, column in _COLUMNS.items():
            value = getattr(self, name)
            if value is not None:
                clauses.append(f'"{column}" = ?')
                params.append(value)
        if self.outcome == "passed":
            clauses.append("passed")
        elif self.outcome == "failed":
            clauses.append("NOT coalesce(passed, false)")
        if self.check is not None:
            clauses.append("list_contains(failed_checks, ?)")
            params.append(self.check)
        if search_key is not None:
            clauses.append("id IN (SELECT id FROM viewer_search WHERE q = ?)")
            params.append(search_key)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def active(self) -> dict[str, str]:
        """The filters set, as query-string values (page left out)."""
        out: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "page" and value is not None:
                out[f.name] = str(value)
        return out

    def query_string(self, **changes: Any) -> str:
        changed = replace(self, **changes)
        values = changed.active()
        if changed.page != 1:
            values["page"] = str(changed.page)
        return urlencode(values)
