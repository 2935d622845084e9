"""Route mode (SPEC section 6): one member answers an agent's turn, tools and all, sticky per conversation.

Who may take a turn, and in which order, is the seater's decision (`services/seater/route_seating.py`);
the gateway measures what the request needs, keeps the conversation, relays the member and records.

Pure domain, no I/O:
- `conversation`: the conversation key and its record (stored as JSON bytes).
- `needs`: what a request asks of a member (tools, images, its size), sent to the seater.
- `upstream_request`: the OpenAI chat request a member is sent (RM-5).
- `assemble`: a member's stream chunks folded into text, held-back reasoning, whole tool calls, usage.
- `failover`: the walk down the order, the 200's status and the errors (RM-6).
- `bench`: the `bench` object, the headers (RM-8), the turn record and the first-answer offload (RM-9).
- `record`: the bus messages a turn sends and leaves behind.

On the bus and HTTP: `desk` (the process's route side: conversation table, the seater's seating, turns in
flight), `turn` (one turn's walk), `relay` (a member's frames from its caller), `store` (the conversation
KV bucket), `aftermath` (records and shadow seats), `answer` (the `route` reply mode over HTTP). Each
format's route encoder lives with its format (`services/gateway/formats/`, RM-7).
"""
