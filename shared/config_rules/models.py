"""Changes to a model on the bench (C-5, C-7, C-8, C-14, HL-6; H-D3 /api/model, /api/model-options,
/api/restore, /api/retry).
Pure: each rule reads a request body and the folded configuration, and returns one event or raises
`Invalid` with every reason."""

from __future__ import annotations

from typing import Any

from shared.alerts import pending_key
from shared.commands import SeatCall
from shared.config_rules.base import (
    ALIAS_RE,
    NOT_CHAT_ROLES,
    ROLES,
    Conflict,
    Invalid,
    Missing,
    Rule,
    is_int,
    unknown_fields,
)
from shared.config_state import ConfigState
from shared.events import AlertCleared, ConfigEvent, ModelOptions, ModelRestored, ModelUpdated
from shared.probe_calls import RETRY, probe_call

MAX_TOKENS_RANGE = (1, 1_000_000)


def registered(alias: Any, state: ConfigState, errors: list[str]) -> str:
    if isinstance(alias, str) and alias in state.retired:
        errors.append(f"{alias!r} is retired; restore it first")
    elif not isinstance(alias, str) or alias not in state.models:
        errors.append(Missing(f"no model with alias {alias!r} on the bench"))
    else:
        return alias
    return ""


def new_alias_errors(new: Any, state: ConfigState) -> list[str]:
    """C-5: the alias form; never an alias in use, retired or left behind by a rename, nor one differing
    only by case from any of those."""
    if not isinstance(new, str) or not ALIAS_RE.match(new):
        return ["alias must be 2-64 characters of A-Z, a-z, 0-9, '.', '_' and '-', starting with a letter "
                f"or digit (got {new!r})"]
    taken = [*state.models, *state.retired, *state.renamed]
    if new in taken:
        why = "aliases in use, retired or renamed away are never reused"
        return [Conflict(f"alias {new!r} is taken ({why})")]
    clash = next((a for a in taken if a.lower() == new.lower()), None)
    return [f"alias {new!r} differs only by case from {clash!r}"] if clash else []


def places_of(alias: str, state: ConfigState) -> list[str]:
    return sorted(n for n, c in state.collections.items()
                  if alias in c.members or c.merger == alias or alias in c.shadows)


def change_model(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("alias", "new_alias", "new_role", "new_ad_hoc"))
        alias = registered(body.get("alias"), state, errors)
        new_alias, role, ad_hoc = body.get("new_alias"), body.get("new_role"), body.get("new_ad_hoc")
        model = state.models.get(alias)
        if model is not None:
            new_alias = None if new_alias == alias else new_alias
            role = None if role == model.role else role
            ad_hoc = None if ad_hoc == model.ad_hoc else ad_hoc
            if new_alias is None and role is None and ad_hoc is None:
                errors.append("nothing to change: send new_alias, new_role or new_ad_hoc with a new value")
        if new_alias is not None:
            errors.extend(new_alias_errors(new_alias, state))
        if role is not None and model is not None:
            if role not in ROLES:
                errors.append(f'"new_role" must be one of {", ".join(ROLES)}')
            elif "decision" in (role, model.role):
                errors.append("a decision model's role is fixed (C-9)")
            elif role in NOT_CHAT_ROLES and places_of(alias, state):
                errors.append(f"{alias!r} sits in {', '.join(places_of(alias, state))}; an {role} model "
                              "cannot be a member or merger: take it out first")
        if ad_hoc is not None and not isinstance(ad_hoc, bool):
            errors.append('"new_ad_hoc" must be true or false')
        if errors:
            raise Invalid(errors)
        return ModelUpdated(id=event_id, alias=alias, new_alias=new_alias, role=role, ad_hoc=ad_hoc)

    return rule


def model_options(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("alias", "max_tokens"))
        alias = registered(body.get("alias"), state, errors)
        max_tokens = body.get("max_tokens")
        low, high = MAX_TOKENS_RANGE
        if max_tokens is not None:
            if not is_int(max_tokens) or not low <= max_tokens <= high:
                errors.append(f'"max_tokens" must be a whole number from {low:,} to {high:,}, or null')
            elif alias and (known := state.models[alias].max_output) and max_tokens > known:
                errors.append(f"{alias} writes at most {known:,} tokens; max_tokens {max_tokens:,} is above "
                              "it")
        if errors:
            raise Invalid(errors)
        return ModelUpdated(id=event_id, alias=alias, options=ModelOptions(max_tokens=max_tokens))

    return rule


def restore_model(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("alias",))
        alias = body.get("alias")
        record = state.retired.get(alias) if isinstance(alias, str) else None
        if record is None:
            on_bench = isinstance(alias, str) and alias in state.models
            errors.append(Conflict(f"{alias!r} is on the bench, not retired") if on_bench
                          else Missing(f"no retired model {alias!r}"))
        else:
            model = record.model
            if model.endpoint not in state.endpoints:
                errors.append(f"its endpoint {model.endpoint} no longer exists; add it again first")
            place = (model.served, model.endpoint)
            again = [a for a, m in state.models.items() if (m.served, m.endpoint) == place]
            if again:
                errors.append(f"{model.served} on {model.endpoint} is registered again as {again[0]!r}")
        if errors:
            raise Invalid(errors)
        return ModelRestored(id=event_id, alias=alias)

    return rule


def retry_call(body: dict[str, Any], state: ConfigState, run: str, now: float) -> SeatCall:
    """HL-6 `/api/retry`: one probe call for a model on the bench (refused with every reason otherwise)."""
    errors = unknown_fields(body, ("alias",))
    alias = registered(body.get("alias"), state, errors)
    if alias and state.models[alias].endpoint not in state.endpoints:
        errors.append(f"its endpoint {state.models[alias].endpoint} no longer exists")
    if errors:
        raise Invalid(errors)
    return probe_call(state, run, state.models[alias], RETRY, now, task="retry")


def clear_retiring(served: str) -> Rule:
    """A retry that answers clears the model's `retiring` alert (HL-6)."""

    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        return AlertCleared(id=event_id, key=pending_key(served))

    return rule
