"""The gateway's published contract: what `/openapi.json` says the routes of every format accept and answer
(issue 24). The admin API is described by its pydantic bodies; the formats' routes, whose handlers read
raw JSON, are described here."""
