"""`bench bus …`: the credentials and permissions of the NATS bus (issue 13). Local files only: no server.

`bench up` makes its own credentials under the data folder; these commands are for a NATS you run
yourself, docker-compose and Kubernetes, where each service's seed goes into a Secret of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.commands import noun_app
from cli.output import say, stdout
from shared import bus_access, bus_credentials

app = noun_app("The NATS bus: per-service credentials and what each service may do on it.")


@app.command("credentials")
def credentials(
    out: Annotated[Path, typer.Option("--out", help="Folder for the seeds and auth.conf (made if missing).")],
) -> None:
    """Make one nkey seed per role (<role>.nk, mode 0600) in --out, where missing, and write auth.conf,
    the nats-server `authorization` block (public keys and permissions only) to `include` in its config.

    Seeds already in the folder are kept, so running it again only rewrites auth.conf (after an upgrade
    that changed the permissions). To rotate a role's seed: delete its .nk file, run this again, update
    that role's Secret and the server's auth.conf, reload NATS, then restart that role's processes.

    Example:

    \b
      bench bus credentials --out deploy/bus
    """
    keys = bus_credentials.ensure(out)
    conf = bus_credentials.write_auth_conf(out, out / bus_credentials.AUTH_CONF)
    for role in bus_access.ROLES:
        say(f"{role}: {bus_credentials.seed_path(out, role)} (public key {keys[role]})")
    stdout.print(f"nats-server authorization: {conf}", markup=False)


@app.command("permissions")
def permissions() -> None:
    """Print what each role may publish and subscribe to on the bus (the matrix the server enforces).

    Example:

    \b
      bench bus permissions
    """
    stdout.print(bus_access.matrix_markdown(), markup=False)
