"""`bench bus …`: the credentials and permissions of the NATS bus (issue 13). Local files only: no server.

`bench up` makes its own credentials under the data folder; these commands are for a NATS you run
yourself, docker-compose and Kubernetes, where each service's seed goes into a Secret of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.commands import noun_app
from cli.errors import CliError, UsageProblem
from cli.output import say, stdout
from shared import bus_access, bus_credentials

ROLE_HELP = "The role whose seed to replace: " + ", ".join(bus_access.ROLES)
app = noun_app("The NATS bus: per-service credentials and what each service may do on it.")


@app.command("credentials")
def credentials(
    out: Annotated[Path, typer.Option("--out", help="Folder for the seeds and auth.conf (made if missing).")],
) -> None:
    """Make one nkey seed per role (<role>.nk, mode 0600) in --out, where missing, and write auth.conf,
    the nats-server `authorization` block (public keys and permissions only) to `include` in its config.

    Seeds already in the folder are kept, so running it again only rewrites auth.conf (after an upgrade
    that changed the permissions, or to end a rotation: see `bench bus rotate`).

    Example:

    \b
      bench bus credentials --out deploy/bus
    """
    keys = bus_credentials.ensure(out)
    conf = bus_credentials.write_auth_conf(out, out / bus_credentials.AUTH_CONF)
    for role in bus_access.ROLES:
        say(f"{role}: {bus_credentials.seed_path(out, role)} (public key {keys[role]})")
    stdout.print(f"nats-server authorization: {conf}", markup=False)


@app.command("rotate")
def rotate(
    role: Annotated[str, typer.Argument(help=ROLE_HELP)],
    out: Annotated[Path, typer.Option("--out", help="The folder `bench bus credentials` made.")],
) -> None:
    """Give one role a new seed without a gap: its current seed becomes <role>.nk.previous, and auth.conf
    accepts both keys. Put auth.conf into the server and reload it, then give the role's processes the new
    <role>.nk and restart them; then delete <role>.nk.previous and run `bench bus credentials` again, and
    reload the server once more: the old key is refused from then on.

    Example:

    \b
      bench bus rotate caller --out deploy/bus
    """
    if role not in bus_access.ROLES:
        raise UsageProblem(f"no role {role!r}: one of {', '.join(bus_access.ROLES)}")
    try:
        previous = bus_credentials.rotate(out, role)
    except bus_credentials.CredentialsError as exc:
        raise CliError(str(exc)) from None
    conf = bus_credentials.write_auth_conf(out, out / bus_credentials.AUTH_CONF)
    say(f"{role}: new seed {bus_credentials.seed_path(out, role)}; the previous one is {previous}")
    stdout.print(f"nats-server authorization (both keys accepted): {conf}", markup=False)
    say(f"next: reload NATS with {conf}, restart the {role} processes with the new seed, then delete "
        f"{previous}, run `bench bus credentials --out {out}` and reload NATS again")


@app.command("permissions")
def permissions() -> None:
    """Print what each role may publish and subscribe to on the bus (the matrix the server enforces).

    Example:

    \b
      bench bus permissions
    """
    stdout.print(bus_access.matrix_markdown(), markup=False)
