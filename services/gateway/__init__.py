"""The gateway: HTTP in every API format, translated into one canonical `Ask`, answered by a panel.

Transport (FastAPI routes, NATS) stays in `app.py`, `routes/` and `panel/runner.py`; everything that
decides what a request means or what a reply says is pure and lives in `ask.py`, `formats/`, `panel/`
(except the runner) and `admin/rules.py`.
"""
