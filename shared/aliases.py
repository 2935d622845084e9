"""C-5's alias rule, used where a model is registered: the admin API (`POST /api/models`) and onboarding
(the prober's register step). Pure."""

from __future__ import annotations

from shared.config_state import ConfigState


def default_alias(served: str, endpoint: str, state: ConfigState) -> str:
    """C-5: the served id's last `/` segment with `:` → `-`; `-<endpoint>` appended when that alias already
    names a different model (retired ones included)."""
    alias = served.rsplit("/", 1)[-1].replace(":", "-")
    holder = state.models.get(alias) or (state.retired[alias].model if alias in state.retired else None)
    taken = holder is not None and (holder.served, holder.endpoint) != (served, endpoint)
    if taken or alias in state.renamed:  # a renamed-away alias is never reused either
        alias = f"{alias}-{endpoint}"
    return alias
