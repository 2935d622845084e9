"""The admin JSON API (H-D1..H-D3 as our own API under `/api/`), one router per subject, each documented in
the OpenAPI schema with its request and reply bodies."""

from __future__ import annotations

from services.console.routes import (
    admin_alerts,
    admin_catalog,
    admin_config,
    admin_endpoints,
    admin_keys,
    admin_ledger,
    admin_login,
    admin_models,
    admin_onboard,
    admin_panels,
    admin_suite,
)

ADMIN_ROUTERS = (admin_config.router, admin_models.router, admin_endpoints.router, admin_keys.router,
                 admin_login.router, admin_ledger.router, admin_alerts.router, admin_suite.router,
                 admin_panels.router, admin_catalog.router, admin_onboard.router)
