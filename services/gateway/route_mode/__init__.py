"""Route mode (SPEC section 6): one member answers an agent's turn, tools and all, sticky per conversation.

Pure domain, no I/O; the transport (relay from the callers, the conversation KV bucket, the HTTP handler)
sits on top:

- `conversation`: the conversation key, its record (stored as JSON bytes) and the member order (RM-4).
- `eligibility`: who may take the turn and why the others may not (RM-2).
- `upstream_request`: the OpenAI chat request a member is sent (RM-5).
- `assemble`: a member's stream chunks folded into text, held-back reasoning, whole tool calls, usage.
- `failover`: the walk down the order, the 200's status and the errors (RM-6).
- `encoders`: the reply in the request's own format, streamed or not (RM-7).
- `bench`: the `bench` object, the headers (RM-8), the turn record and the first-answer offload (RM-9).
"""
