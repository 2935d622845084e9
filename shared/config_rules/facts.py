"""The user's own facts for a model (C-15; `bench model set`, `POST /api/model/facts`). Pure: the rule reads
the body and the folded configuration and returns one `model_facts_set`, or raises `Invalid` with every
reason."""

from __future__ import annotations

from typing import Any

from shared.config_rules.base import Invalid, Rule, optional_bool, optional_positive, unknown_fields
from shared.config_rules.models import registered
from shared.config_state import ConfigState
from shared.events import ConfigEvent, ModelFactsSet
from shared.model_facts import CAPABILITIES, CUTOFF_RE, FACT_NAMES, ModelFacts

COST_MAX = 1_000_000.0


def cost_of(body: dict[str, Any], errors: list[str]) -> dict[str, float] | None:
    cost = body.get("cost")
    if cost is None:
        return None
    if not isinstance(cost, dict) or set(cost) != {"input", "output"}:
        errors.append('"cost" must be {"input": N, "output": N}: US dollars per million tokens')
        return None
    for side in ("input", "output"):
        value = cost[side]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= COST_MAX:
            errors.append(f'"cost.{side}" must be a number from 0 to {COST_MAX:,.0f} (dollars per M tokens)')
            return None
    return {"input": float(cost["input"]), "output": float(cost["output"])}


def set_facts(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("alias", "clear", *FACT_NAMES))
        alias = registered(body.get("alias"), state, errors)
        values: dict[str, Any] = {
            "context_window": optional_positive(body, "context_window", errors),
            "max_output": optional_positive(body, "max_output", errors),
            **{name: optional_bool(body, name, errors) for name in CAPABILITIES},
            "cost": cost_of(body, errors),
        }
        cutoff = body.get("knowledge_cutoff")
        if cutoff is not None and (not isinstance(cutoff, str) or not CUTOFF_RE.match(cutoff)):
            errors.append('"knowledge_cutoff" must be a month or a day: YYYY-MM or YYYY-MM-DD')
        else:
            values["knowledge_cutoff"] = cutoff
        clear = body.get("clear") or []
        if not isinstance(clear, list) or any(not isinstance(c, str) or c not in FACT_NAMES for c in clear):
            errors.append(f'"clear" must list facts among {", ".join(FACT_NAMES)}')
            clear = []
        given = {name: value for name, value in values.items() if value is not None}
        both = sorted(set(given) & set(clear))
        if both:
            errors.append(f"set or clear, not both: {', '.join(both)}")
        if not given and not clear and not errors:
            errors.append(f"nothing to set: give a fact ({', '.join(FACT_NAMES)}) or clear one")
        if errors:
            raise Invalid(errors)
        return ModelFactsSet(id=event_id, by="admin", alias=alias, facts=ModelFacts.model_validate(given),
                             clear=list(dict.fromkeys(clear)))

    return rule


def facts_view(alias: str, state: ConfigState) -> dict[str, Any]:
    """Each fact with its value and source (unknown: null, source null), and when the catalog last
    refreshed."""
    model = state.models.get(alias)
    if model is None:
        raise Invalid([registered_reason(alias, state)])
    facts = state.facts_of(alias) or ModelFacts()
    dumped = facts.model_dump(mode="json")
    return {
        "alias": alias, "served": model.served, "endpoint": model.endpoint,
        "facts": [{"fact": name, "value": dumped[name], "source": facts.sources.get(name)}
                  for name in FACT_NAMES],
        "catalog_refreshed": state.catalog_refreshed,
    }


def registered_reason(alias: str, state: ConfigState) -> str:
    errors: list[str] = []
    registered(alias, state, errors)
    return errors[0]


