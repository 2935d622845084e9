"""The stamps of a `benchmarks.hops` run: named functions of every process wrapped, as their modules load,
so each call writes `<epoch> <pid> <label>` to one shared file.

Loaded by `benchmarks/hops_site/sitecustomize.py` in every Python process of the run (the stack, forked from
its zygote after the modules are loaded and stamped; the fake provider; the load client) when
`BENCH_HOPS_LOG` names the file. Nothing in the product knows about it. Each stamp costs a few
microseconds (a write to the file), which the timeline includes.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import os
import sys
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

# (module, attribute path, label, when): `entry` stamps a call's start, `exit` its end. A label with
# `{message}` is filled from an ASGI message's type (uvicorn's `send`).
POINTS: tuple[tuple[str, str, str, str], ...] = (
    ("benchmarks.loadgen", "one", "client sends", "entry"),
    ("benchmarks.loadgen", "one", "client has the whole reply", "exit"),
    ("aiohttp.streams", "StreamReader.readany", "client reads", "exit"),
    ("services.gateway.http", "AccessLog.__call__", "gateway hears the request", "entry"),
    ("uvicorn.protocols.http.httptools_impl", "RequestResponseCycle.send", "gateway writes {message}",
     "entry"),
    ("services.gateway.route_mode.desk", "RouteDesk.prepare", "gateway prepares the turn", "entry"),
    ("services.gateway.route_mode.relay", "MemberRelay.ask", "gateway asks a caller", "entry"),
    ("services.gateway.route_mode.relay", "RelayHub._on_frame", "gateway hears a frame", "entry"),
    ("services.gateway.panel.runner", "PanelRunner._plan", "gateway asks the seater", "entry"),
    ("services.gateway.panel.runner", "PanelRunner._plan", "gateway has the plan", "exit"),
    ("services.gateway.panel.runner", "PanelRunner._queue_calls", "gateway queues the seats", "entry"),
    ("services.gateway.panel.runner", "Gathering.on_msg", "gateway hears a seat", "entry"),
    ("services.seater.service", "Seater.answer", "seater plans", "entry"),
    ("services.seater.service", "Seater.answer", "seater has planned", "exit"),
    ("services.caller.route_relay", "RouteRelay.accept", "caller takes the turn", "entry"),
    ("services.caller.consumer", "CallConsumer._spawn", "caller takes a seat", "entry"),
    ("services.caller.upstream", "note_sending", "caller writes to the provider", "entry"),
    ("services.caller.route_call", "RouteCaller._relay", "caller reads the provider's reply", "entry"),
    ("services.caller.route_relay", "Frames._publish", "caller publishes a frame", "entry"),
    ("services.caller.upstream", "Upstream.call", "caller has a seat's reply", "exit"),
    ("services.caller.consumer", "CallConsumer._publish", "caller has stored a seat's answer", "exit"),
    ("tests.fakes.behaviour", "take_request", "provider hears", "entry"),
    ("tests.fakes.behaviour", "take_request", "provider's latency is over", "exit"),
)


class Stamps:
    def __init__(self, path: str) -> None:
        self.path, self.pid, self.fd = path, -1, -1

    def __call__(self, label: str) -> None:
        if self.pid != os.getpid():  # a forked child writes through a descriptor of its own
            self.pid, self.fd = os.getpid(), os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.write(self.fd, f"{time.time():.6f} {self.pid} {label}\n".encode())


def stamped(func: Callable[..., Any], label: str, when: str, stamp: Stamps) -> Callable[..., Any]:
    def named(args: Sequence[Any]) -> str:
        if "{message}" not in label:
            return label
        message = args[1] if len(args) > 1 and isinstance(args[1], dict) else {}
        kinds = {"http.response.start": "headers", "http.response.body": "body"}
        kind = kinds.get(str(message.get("type")), "?")
        if kind == "body" and not message.get("more_body", False):
            kind = "the end"
        return label.format(message=kind)

    if inspect.iscoroutinefunction(func):
        @functools.wraps(func)
        async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
            if when == "entry":
                stamp(named(args))
            try:
                return await func(*args, **kwargs)
            finally:
                if when == "exit":
                    stamp(named(args))
        return wrapped_async

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if when == "entry":
            stamp(named(args))
        try:
            return func(*args, **kwargs)
        finally:
            if when == "exit":
                stamp(named(args))
    return wrapped


def apply(module: ModuleType, stamp: Stamps) -> None:
    for name, path, label, when in POINTS:
        if name != module.__name__:
            continue
        *owners, attribute = path.split(".")
        owner: Any = module
        for part in owners:
            owner = getattr(owner, part)
        raw = vars(owner).get(attribute) if isinstance(owner, type) else None
        if isinstance(raw, staticmethod):  # stays a static method: no `self` is handed to it
            setattr(owner, attribute, staticmethod(stamped(raw.__func__, label, when, stamp)))
        else:
            setattr(owner, attribute, stamped(getattr(owner, attribute), label, when, stamp))


class StampingFinder(importlib.abc.MetaPathFinder):
    """Finds the stamped modules through the other finders, and stamps each once it has run."""

    def __init__(self, stamp: Stamps) -> None:
        self.stamp = stamp
        self.names = {name for name, *_ in POINTS}

    def find_spec(
        self, fullname: str, path: Any, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                run = spec.loader.exec_module

                def exec_module(module: ModuleType, run: Callable[[ModuleType], None] = run) -> None:
                    run(module)
                    apply(module, self.stamp)

                spec.loader.exec_module = exec_module  # type: ignore[method-assign]
                return spec
        return None


def install(path: str) -> None:
    stamp = Stamps(path)
    sys.meta_path.insert(0, StampingFinder(stamp))
    for name in {name for name, *_ in POINTS}:
        if name in sys.modules:  # already loaded (by site itself): stamped now
            apply(sys.modules[name], stamp)
