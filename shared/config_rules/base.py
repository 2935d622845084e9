"""What a configuration write may say, checked against the configuration as folded (C-2, C-5, C-10, C-11,
C-14). Pure: each rule reads a request body and the `ConfigState`, and returns the one config event to
publish, or raises `Invalid` listing every reason at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from shared.aliases import default_alias
from shared.config_state import ConfigState
from shared.events import (
    CollectionRemoved,
    CollectionSaved,
    ConfigEvent,
    EndpointSaved,
    GatewaySettingsSaved,
    ModelRegistered,
    ModelRetired,
)
from shared.loopback import is_loopback
from shared.provider_keys import KEY_PREFIX, key_variable

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,31}$")
ALIAS_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$")
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,23}$")
APIS = ("chat", "responses", "anthropic", "gemini")
KINDS = ("provider", "aggregator", "hub", "local")
ROLES = ("general", "code", "light", "vision", "image", "decision")
NOT_CHAT_ROLES = ("image", "decision")  # C-7, C-9: never seated, so never a member or merger
COLLECTION_SHAPES = ("general", "design", "prose", "review", "code", "enumeration", "quick", "vision")
REPLIES = ("all", "merged", "route")
SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key", "proxy-authorization")
MAX_CALLS_RANGE = (1, 10)
MAX_EXPLORERS_RANGE = (0, 2)
DESCRIPTION_MAX = 300
TAGS_MAX = 8
REASON_MAX = 500

Rule = Callable[[ConfigState, str], ConfigEvent]


class Missing(str):
    """A reason that is only "the thing named does not exist": a write refused for such reasons alone is a
    404 (no such thing), not a 400 (issue 24: the body fits the schema, the state does not)."""


class Conflict(str):
    """A reason that is only "not in the state it is now" (a name taken, a model already retired, an endpoint
    still serving models): refused for such reasons (and missing ones) alone, a write is a 409."""


class Invalid(Exception):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors

    @property
    def status(self) -> int:
        if not self.errors or not all(isinstance(e, Missing | Conflict) for e in self.errors):
            return 400
        return 404 if all(isinstance(e, Missing) for e in self.errors) else 409


def strip_bench(name: Any) -> Any:
    return name[len("bench/") :] if isinstance(name, str) and name.startswith("bench/") else name


def unknown_fields(body: dict[str, Any], allowed: Iterable[str]) -> list[str]:
    extra = sorted(set(body) - set(allowed))
    return [f"unknown field(s): {', '.join(extra)}"] if extra else []


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def optional_bool(body: dict[str, Any], name: str, errors: list[str]) -> bool | None:
    value = body.get(name)
    if value is not None and not isinstance(value, bool):
        errors.append(f'"{name}" must be true, false or null')
        return None
    return value


def optional_positive(body: dict[str, Any], name: str, errors: list[str]) -> int | None:
    value = body.get(name)
    if value is not None and (not is_int(value) or value < 1):
        errors.append(f'"{name}" must be a positive whole number or null')
        return None
    return value


def check_name(name: Any, what: str, errors: list[str]) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        errors.append(f"{what} name must be 2-32 characters of a-z, 0-9 and -, starting with a letter or "
                      f"digit (got {name!r})")
        return ""
    return name


def infer_kind(base: str) -> str:
    """C-2: a base whose path ends `/api` is a hub (Open WebUI); a loopback host is local; else a provider."""
    parts = urlsplit(base)
    if parts.path.rstrip("/").endswith("/api"):
        return "hub"
    if is_loopback(base):
        return "local"
    return "provider"


# ---------------------------------------------------------------- endpoints


def save_endpoint(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("name", "base", "api", "kind", "headers", "default", "key"))
        name = check_name(body.get("name"), "endpoint", errors)
        if "key" in body:
            variable = key_variable(name) if name else f"{KEY_PREFIX}<NAME>"
            errors.append(f"keys are never sent to or stored by Benchwarmers: set {variable} in the callers' "
                          "environment (or their mounted secrets) instead")
        base = body.get("base")
        if not isinstance(base, str) or not base.strip():
            errors.append('"base" must be the endpoint\'s http(s) URL, e.g. https://api.example.com/v1')
            base = ""
        else:
            base = base.strip().rstrip("/")
            parts = urlsplit(base)
            if parts.scheme not in ("http", "https") or not parts.hostname or " " in base:
                errors.append(f'"base" must be an http(s) URL (got {base!r})')
            elif parts.username or parts.password:
                errors.append('"base" must not carry a user or password: keys live in the callers\' '
                              "environment")
        api = body.get("api") or "chat"
        if api not in APIS:
            errors.append(f'"api" must be one of {", ".join(APIS)}')
        kind = body.get("kind") or (infer_kind(base) if base else "provider")
        if kind not in KINDS:
            errors.append(f'"kind" must be one of {", ".join(KINDS)}')
        headers = body.get("headers") or {}
        if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            errors.append('"headers" must be an object of header names to string values')
            headers = {}
        secret = sorted(h for h in headers if h.lower() in SECRET_HEADERS)
        if secret:
            errors.append(f"header(s) {', '.join(secret)} would carry a key: keys live in the callers' "
                          f"environment as {key_variable(name or 'name')}")
        default = optional_bool(body, "default", errors) or False
        if errors:
            raise Invalid(errors)
        return EndpointSaved(id=event_id, by="admin", name=name, base=base, api=api, kind=kind,
                             headers=headers, default=default)

    return rule


# ---------------------------------------------------------------- models


def alias_clashes(alias: str, served: str, endpoint: str, state: ConfigState) -> list[str]:
    if alias in state.renamed:
        return [Conflict(f"alias {alias!r} was renamed to {state.current_alias(alias)!r}; an old alias is "
                         "never reused")]
    if alias in state.retired:
        return [Conflict(f"alias {alias!r} belongs to a retired model; restore it, or pick another alias "
                         "(a retired alias is never reused)")]
    current = state.models.get(alias)
    if current is not None and (current.served, current.endpoint) != (served, endpoint):
        return [Conflict(f"alias {alias!r} already names {current.served} on {current.endpoint}")]
    for other in (*state.models, *state.retired, *state.renamed):
        if other != alias and other.lower() == alias.lower():
            return [f"alias {alias!r} differs only by case from {other!r}"]
    for other_alias, model in state.models.items():
        if other_alias != alias and (model.served, model.endpoint) == (served, endpoint):
            return [f"{served} on {endpoint} is already on the bench as {other_alias!r}"]
    return []


def register_model(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("served", "endpoint", "alias", "context_window", "max_output", "role",
                                       "ad_hoc", "vision", "tools"))
        served = body.get("served")
        if not isinstance(served, str) or not served.strip():
            errors.append('"served" must be the model id the endpoint serves')
            served = ""
        endpoint = body.get("endpoint")
        if not isinstance(endpoint, str) or endpoint not in state.endpoints:
            known = ", ".join(sorted(state.endpoints)) or "none yet"
            errors.append(f"endpoint {endpoint!r} is not configured (endpoints: {known})")
            endpoint = ""
        context_window = optional_positive(body, "context_window", errors)
        max_output = optional_positive(body, "max_output", errors)
        role = body.get("role") or "general"
        if role not in ROLES:
            errors.append(f'"role" must be one of {", ".join(ROLES)}')
        ad_hoc = optional_bool(body, "ad_hoc", errors) or False
        vision = optional_bool(body, "vision", errors)
        tools = optional_bool(body, "tools", errors)
        alias = body.get("alias")
        if alias is None and served and endpoint:
            alias = default_alias(served, endpoint, state)
        if alias is not None:
            if not isinstance(alias, str) or not ALIAS_RE.match(alias):
                errors.append(f"alias must be 2-64 characters of A-Z, a-z, 0-9, '.', '_' and '-', starting "
                              f"with a letter or digit (got {alias!r})")
            elif served and endpoint:
                errors.extend(alias_clashes(alias, served, endpoint, state))
        if errors:
            raise Invalid(errors)
        return ModelRegistered(
            id=event_id, by="admin", alias=alias, served=served, endpoint=endpoint,
            context_window=context_window, max_output=max_output, role=role, ad_hoc=ad_hoc, vision=vision,
            tools=tools,
        )

    return rule


def retire_model(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("alias", "reason"))
        alias = body.get("alias")
        if alias in state.retired:
            errors.append(Conflict(f"{alias!r} is already retired"))
        elif not isinstance(alias, str) or alias not in state.models:
            errors.append(Missing(f"no model with alias {alias!r} on the bench"))
        reason = body.get("reason") or ""
        if not isinstance(reason, str) or len(reason) > REASON_MAX:
            errors.append(f'"reason" must be text of at most {REASON_MAX} characters')
            reason = ""
        if errors:
            raise Invalid(errors)
        return ModelRetired(id=event_id, by="admin", alias=alias, why=reason)

    return rule


# ---------------------------------------------------------------- collections


def chat_model_errors(alias: str, state: ConfigState, what: str) -> list[str]:
    model = state.models.get(alias)
    if model is None:
        if alias in state.retired:
            return [f"{what} {alias!r} is retired from the bench"]
        return [f"{what} {alias!r} is not a model on the bench"]
    if model.role in NOT_CHAT_ROLES:
        return [f"{what} {alias!r} is a {model.role} model, not a chat model"]
    return []


def check_members(raw: Any, state: ConfigState, errors: list[str]) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(m, str) for m in raw):
        errors.append('"members" must be a list of model aliases')
        return []
    members = list(dict.fromkeys(raw))
    if not members:
        errors.append("a collection needs at least one member")
    for alias in members:
        errors.extend(chat_model_errors(alias, state, "member"))
    if len(members) > state.max_calls:
        errors.append(f"{len(members)} members is more than max_calls ({state.max_calls}); drop members or "
                      "raise max_calls in the gateway settings")
    return members


def check_shadows(raw: Any, state: ConfigState, errors: list[str]) -> list[str]:
    """Route mode's background evaluators: chat models on the bench, like members (none is fine)."""
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(m, str) for m in raw):
        errors.append('"shadows" must be a list of model aliases')
        return []
    shadows = list(dict.fromkeys(raw))
    for alias in shadows:
        errors.extend(chat_model_errors(alias, state, "shadow"))
    return shadows


def check_tags(raw: Any, errors: list[str]) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        errors.append('"tags" must be a list of strings')
        return []
    tags = list(dict.fromkeys(raw))
    if len(tags) > TAGS_MAX:
        errors.append(f"at most {TAGS_MAX} tags (got {len(tags)})")
    bad = [t for t in tags if not TAG_RE.match(t)]
    if bad:
        errors.append(f"tags must be 1-24 characters of a-z, 0-9 and -, starting with a letter or digit: "
                      f"{', '.join(repr(t) for t in bad)}")
    return tags


def save_collection(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("name", "members", "description", "shape", "tags", "reply", "merger",
                                       "shadows"))
        name = check_name(strip_bench(body.get("name")), "collection", errors)
        members = check_members(body.get("members"), state, errors)
        shadows = check_shadows(body.get("shadows"), state, errors)
        description = body.get("description") or ""
        if not isinstance(description, str) or len(description) > DESCRIPTION_MAX:
            errors.append(f'"description" must be text of at most {DESCRIPTION_MAX} characters')
            description = ""
        shape = body.get("shape") or ""
        if shape == "image":
            errors.append('shape "image" is an image generator\'s; a collection cannot use it')
        elif shape and shape not in COLLECTION_SHAPES:
            errors.append(f'"shape" must be "" (automatic) or one of {", ".join(COLLECTION_SHAPES)}')
        tags = check_tags(body.get("tags"), errors)
        reply = body.get("reply") or "all"
        if reply not in REPLIES:
            errors.append(f'"reply" must be one of {", ".join(REPLIES)}')
        merger = body.get("merger") or ""
        if not isinstance(merger, str):
            errors.append('"merger" must be a model alias or "" (chosen by verdicts)')
        elif merger:
            errors.extend(chat_model_errors(merger, state, "merger"))
        if errors:
            raise Invalid(errors)
        return CollectionSaved(
            id=event_id, by="admin", name=name, members=members, shape=shape, description=description,
            tags=tags, reply=reply, merger=merger, shadows=shadows,
        )

    return rule


def remove_collection(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("name",))
        name = strip_bench(body.get("name"))
        if not isinstance(name, str) or name not in state.collections:
            errors.append(Missing(f"no collection named {name!r}"))
        if errors:
            raise Invalid(errors)
        return CollectionRemoved(id=event_id, by="admin", name=name)

    return rule


# ---------------------------------------------------------------- gateway settings


def save_settings(body: dict[str, Any]) -> Rule:
    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("max_calls", "max_explorers"))
        max_calls = body.get("max_calls", state.max_calls)
        max_explorers = body.get("max_explorers", state.max_explorers)
        low, high = MAX_CALLS_RANGE
        if not is_int(max_calls) or not low <= max_calls <= high:
            errors.append(f'"max_calls" must be a whole number from {low} to {high}')
        else:
            too_big = sorted(n for n, c in state.collections.items() if len(c.members) > max_calls)
            if too_big:
                sizes = ", ".join(f"{n} ({len(state.collections[n].members)})" for n in too_big)
                errors.append(f"max_calls {max_calls} is below the member count of: {sizes}; shrink those "
                              "collections first")
        low, high = MAX_EXPLORERS_RANGE
        if not is_int(max_explorers) or not low <= max_explorers <= high:
            errors.append(f'"max_explorers" must be a whole number from {low} to {high}')
        if errors:
            raise Invalid(errors)
        return GatewaySettingsSaved(id=event_id, by="admin", max_calls=max_calls, max_explorers=max_explorers)

    return rule
