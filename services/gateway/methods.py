"""Which methods a path takes (H-0 as issue 24 refines it): a method the path's routes do not take is the
client's mistake (405 with `Allow`); only a method no HTTP server is expected to know is 501. Pure: it reads
the app's route table, never a request."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from starlette.routing import BaseRoute, Route

# RFC 9110's methods, PATCH (RFC 5789) and QUERY (the safe query method): a server knows them even where a
# resource takes none of them. Anything else (WebDAV's, made-up ones) is a method this server does not know.
KNOWN = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "QUERY"})
ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


KNOWN_PATHS = 1024  # paths whose answer is kept: a client's made-up paths cannot grow it further


@dataclass(frozen=True)
class MethodTable:
    """Every route's path pattern and methods, as the app declared them (the catch-all left out). The
    guard asks on every request; matching a path against every route's pattern is done once per path."""

    routes: tuple[Route, ...]
    known: OrderedDict[str, frozenset[str]] = field(default_factory=OrderedDict, compare=False, repr=False)

    @classmethod
    def of(cls, routes: Iterable[BaseRoute], skip: str) -> MethodTable:
        return cls(tuple(r for r in routes if isinstance(r, Route) and r.methods and r.path != skip))

    def allowed(self, path: str, preflight: bool = False) -> list[str]:
        """The methods `path` takes, in a fixed order; with `preflight` (a gateway path, whose OPTIONS the
        guard answers), OPTIONS too. Empty: no route has this path."""
        found = set(self._matching(path))
        if found and preflight:
            found.add("OPTIONS")
        return ordered(found)

    def _matching(self, path: str) -> frozenset[str]:
        methods = self.known.get(path)
        if methods is None:
            methods = frozenset(m for r in self.routes if r.path_regex.match(path) for m in r.methods or ())
            self.known[path] = methods
            if len(self.known) > KNOWN_PATHS:
                self.known.popitem(last=False)
        return methods


def ordered(methods: Iterable[str]) -> list[str]:
    given = set(methods)
    return [m for m in ORDER if m in given] + sorted(given - set(ORDER))


def allow_header(methods: Sequence[str]) -> dict[str, str]:
    return {"Allow": ", ".join(methods)}
