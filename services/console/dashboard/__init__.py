"""The dashboard (SPEC H-D4): server-rendered pages over the admin API, with htmx (vendored) for forms and
live parts, SVG plots drawn from the ledger's data points, and Server-Sent Events from the bus."""
