"""The facts a model is registered with when it is onboarded (O-1 step 2). Pure.

ONE function, `model_facts`, so the catalog's facts (issue 20, item 1) can take its place: today it reads
what the endpoint's own `/models` listing says (context window, output limit) and the image-generator name
rule; tools and vision stay unknown (None) until a catalog or a capabilities probe says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.commands import ListedModel

# O-1 step 3: names of image generators (no chat probe for them).
IMAGE_NAMES = ("gpt-image", "dall-e", "imagen", "flux", "stable-diffusion", "sdxl", "sd3")


@dataclass(frozen=True)
class Facts:
    context_window: int | None = None
    max_output: int | None = None
    tools: bool | None = None
    vision: bool | None = None
    role: str = "general"


def model_facts(served: str, listed: ListedModel | None) -> Facts:
    """What is known of `served` from its endpoint's listing."""
    name = served.lower().rsplit("/", 1)[-1]
    role = "image" if any(word in name for word in IMAGE_NAMES) else "general"
    if listed is None:
        return Facts(role=role)
    return Facts(context_window=listed.context_window, max_output=listed.max_output, role=role)
