"""Global options work before or after the command (SPEC CLI-2): `bench endpoint add x --url U` is
`bench --url U endpoint add x`. Click only reads a group's options before its subcommand, so they move.
"""

from __future__ import annotations

VALUE_OPTIONS = ("--url",)
FLAG_OPTIONS = ("--json",)


def hoist_globals(args: list[str]) -> list[str]:
    """Move global options (and their values) to the front, keeping their order; stop at `--`."""
    hoisted: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        if arg in FLAG_OPTIONS or arg.startswith(tuple(f"{o}=" for o in VALUE_OPTIONS)):
            hoisted.append(arg)
        elif arg in VALUE_OPTIONS and i + 1 < len(args):
            hoisted.extend(args[i : i + 2])
            i += 1
        else:
            rest.append(arg)
        i += 1
    return hoisted + rest
