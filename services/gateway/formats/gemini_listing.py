"""Gemini's model routes (H-G9): `GET /v1beta/models` and `GET /v1beta/models/<id>`. Pure: functions of the
listing rows (`services.gateway.listing.model_rows`, already narrowed to what the caller may see)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from shared.refusal import Refusal

METHODS = ["generateContent", "streamGenerateContent", "countTokens"]


def model_object(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": f"models/{row['id']}", "baseModelId": row["id"], "version": "1", "displayName": row["id"],
        "description": row.get("description") or "",
    }
    window = (row.get("together") or {}).get("context_window")
    if window:
        out["inputTokenLimit"] = window
    return {**out, "supportedGenerationMethods": list(METHODS)}


def models_body(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"models": [model_object(row) for row in rows]}


def model_body(rows: list[dict[str, Any]], model_id: str) -> dict[str, Any]:
    """One model by its id as the path carries it (URL-encoded or not, e.g. `bench%2Fcore%3Amerged`)."""
    wanted = unquote(model_id).removeprefix("models/")
    row = next((r for r in rows if r["id"] == wanted), None)
    if row is None:
        raise Refusal(404, f"model {json.dumps(wanted)} not found: GET /v1beta/models lists the collections")
    return model_object(row)
