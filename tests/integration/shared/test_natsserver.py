"""A port picked free can be taken before nats-server binds it: the server is launched again on new ports."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared import natsserver
from shared.natsserver import NatsServer


def test_a_port_taken_between_picking_and_binding_is_picked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        picks: Iterator[int] = iter([taken, natsserver.free_port()])
        real = natsserver.free_port
        monkeypatch.setattr(natsserver, "free_port", lambda: next(picks, None) or real())
        server = NatsServer(store=tmp_path / "nats")
        try:
            server.start()
            assert server.port != taken
            assert "address already in use" in (tmp_path / "nats" / "nats-server.log").read_text()
        finally:
            server.stop()


def test_a_fixed_port_that_is_taken_is_not_changed(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        server = NatsServer(store=tmp_path / "nats", port=taken)
        try:
            with pytest.raises(RuntimeError, match="exited"):
                server.start(timeout=10)
            assert server.port == taken
        finally:
            server.stop()
