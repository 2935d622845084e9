"""The console: the operator surfaces (the admin JSON API under `/api/`, `/login`, and the dashboard's
pages), served in the gateway's process by the composition root (`python -m services gateway console`)."""
