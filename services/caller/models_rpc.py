"""`bench.rpc.caller.models`: a caller fetches an endpoint's model list (C-3) for whoever asks, since only
callers hold provider keys. Queue group `callers`: one replica answers each request. A saved endpoint is
listed only at the base saved in the caller's own config fold (`endpoint_base`), whatever a request names."""

from __future__ import annotations

import httpx

from services.caller.endpoint_base import REFUSALS, listing_refusal
from services.caller.keys import KeyStore, missing_key
from services.caller.listing import models_request, parse_models
from services.caller.redaction import without_key
from services.caller.upstream import ReplyTooLarge, read_capped
from services.caller.wire import bad_base, http_error_text
from shared import rpc, subjects
from shared.commands import ListedModel, ModelsReply, ModelsRequest
from shared.config_state import ConfigState
from shared.loopback import is_loopback

MAX_PAGES = 20
LIST_TIMEOUT_S = 30.0


class ModelLister:
    def __init__(self, client: httpx.AsyncClient, keys: KeyStore, config: ConfigState) -> None:
        self.client, self.keys, self.config = client, keys, config

    async def serve(self, bus: rpc.Bus) -> rpc.Subscription:
        return await rpc.serve(bus, subjects.RPC_CALLER_MODELS, subjects.CALLER_QUEUE, ModelsRequest,
                               self.handle)

    async def handle(self, req: ModelsRequest) -> ModelsReply:
        """The endpoint's models; a list that cannot be had is an `RpcFailure` (400 unasked, 502 after)."""
        why = bad_base(req.models_url or req.base)
        if why is None:
            why = listing_refusal(self.config, req.endpoint, req.base, req.models_url)
            if why:
                REFUSALS.note(req.endpoint, req.base, "listing")
        key = self.keys.key_for(req.endpoint)
        if why is None and key is None and not is_loopback(req.base):
            why = missing_key(req.endpoint)
        if why:
            raise rpc.RpcFailure(400, f"Error: client failed: {why}")
        models: list[ListedModel] = []
        page = ""
        for _ in range(MAX_PAGES):
            request = models_request(req, key, page)
            try:
                async with self.client.stream("GET", request.url, headers=request.headers,
                                              timeout=LIST_TIMEOUT_S) as resp:
                    status, raw = resp.status_code, await read_capped(resp)
            except (httpx.HTTPError, ReplyTooLarge) as exc:
                why = f"Error: client failed: {type(exc).__name__}: {exc}"
                raise rpc.RpcFailure(502, without_key(why, key)) from None
            if status != 200:
                text = http_error_text(status, raw.decode(errors="replace"), None)
                raise rpc.RpcFailure(502, without_key(text, key))
            found = parse_models(req.api, raw)
            if found.error:
                raise rpc.RpcFailure(502, without_key(found.error, key))
            models += found.models
            page = found.next
            if not page:
                break
        return ModelsReply(models=models)

