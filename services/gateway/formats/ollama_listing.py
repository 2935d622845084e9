"""Ollama's model routes (H-G8): `GET /api/tags`, `GET /api/version`, `POST /api/show`. Pure: functions of
the listing rows (`services.gateway.listing.model_rows`, already narrowed to what the caller may see).

Collections are not files, so sizes are 0, the digest is the SHA-256 of the name, and `modified_at` is
whatever time the caller passes (e.g. when the gateway started).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from services.gateway.formats.ollama_request import model_name
from shared.refusal import Refusal

VERSION = {"version": "0.12.0"}
DETAILS = {
    "parent_model": "", "format": "", "family": "benchwarmers", "families": ["benchwarmers"],
    "parameter_size": "", "quantization_level": "",
}


def tags_body(rows: list[dict[str, Any]], modified_at: str) -> dict[str, Any]:
    """Every row of `/v1/models` (each collection in its three reply modes) as an Ollama model."""
    return {"models": [
        {
            "name": row["id"], "model": row["id"], "modified_at": modified_at, "size": 0,
            "digest": hashlib.sha256(row["id"].encode()).hexdigest(), "details": dict(DETAILS),
        }
        for row in rows
    ]}


def find_row(rows: list[dict[str, Any]], body: dict[str, Any]) -> dict[str, Any]:
    """`model` or `name`, with or without `bench/`, `:latest` stripped; 404 when no row has it."""
    asked = body.get("model") or body.get("name")
    if not isinstance(asked, str):
        raise Refusal(400, '"model" must be a string such as "bench/<collection>"')
    name = model_name(asked)
    wanted = name if name.startswith("bench/") else f"bench/{name}"
    row = next((r for r in rows if r["id"] == wanted), None)
    if row is None:
        raise Refusal(404, f"model {json.dumps(asked)} not found: GET /api/tags lists the collections")
    return row


def show_body(rows: list[dict[str, Any]], body: dict[str, Any], modified_at: str) -> dict[str, Any]:
    row = find_row(rows, body)
    together = row.get("together") or {}
    info: dict[str, Any] = {"general.architecture": "benchwarmers", "general.basename": row["id"]}
    if together.get("context_window"):
        info["benchwarmers.context_length"] = together["context_window"]
    capabilities = ["completion"] + (["vision"] if "vision" in together.get("capabilities", []) else [])
    return {
        "modelfile": f"# {row.get('description') or row['id']}", "parameters": "",
        "template": "{{ .Prompt }}", "details": dict(DETAILS), "model_info": info, "modified_at": modified_at,
        "capabilities": capabilities,
    }
