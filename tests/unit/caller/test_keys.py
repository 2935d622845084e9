"""Key lookup: environment first, then a mounted secret (directory, .env or JSON file)."""

from __future__ import annotations

import json
from pathlib import Path

from services.caller.keys import KeyStore, missing_key


def test_key_from_environment() -> None:
    store = KeyStore(env={"BENCHWARMERS_KEY_GROQ": " gsk-123 \n"})
    assert store.key_for("groq") == "gsk-123"
    assert store.key_for("other") is None


def test_key_from_secret_directory_by_endpoint_or_variable_name(tmp_path: Path) -> None:
    (tmp_path / "groq").write_text("gsk-dir\n")
    (tmp_path / "BENCHWARMERS_KEY_OPEN_ROUTER").write_text("or-dir")
    store = KeyStore(env={}, secrets_path=tmp_path)
    assert store.key_for("groq") == "gsk-dir"
    assert store.key_for("open-router") == "or-dir"
    assert store.key_for("missing") is None


def test_environment_wins_over_secrets(tmp_path: Path) -> None:
    (tmp_path / "groq").write_text("from-file")
    assert (
        KeyStore(env={"BENCHWARMERS_KEY_GROQ": "from-env"}, secrets_path=tmp_path).key_for("groq")
        == "from-env"
    )


def test_key_from_dotenv_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.env"
    path.write_text("# provider keys\nexport BENCHWARMERS_KEY_GROQ='gsk-env'\nmistral = mk-1\n\n")
    store = KeyStore(env={}, secrets_path=path)
    assert store.key_for("groq") == "gsk-env"
    assert store.key_for("mistral") == "mk-1"


def test_key_from_json_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"groq": "gsk-json", "BENCHWARMERS_KEY_OPEN_ROUTER": "or-json"}))
    store = KeyStore(env={}, secrets_path=path)
    assert store.key_for("groq") == "gsk-json"
    assert store.key_for("open-router") == "or-json"


def test_rotated_secret_is_read_again_after_a_second(tmp_path: Path) -> None:
    (tmp_path / "groq").write_text("old")
    now = [100.0]
    store = KeyStore(env={}, secrets_path=tmp_path, clock=lambda: now[0])
    assert store.key_for("groq") == "old"
    (tmp_path / "groq").write_text("new")
    now[0] += 0.5
    assert store.key_for("groq") == "old"  # looked up at most once a second
    now[0] += 0.5
    assert store.key_for("groq") == "new"


def test_a_key_file_added_or_a_secrets_file_rewritten_is_read_at_once(tmp_path: Path) -> None:
    store = KeyStore(env={}, secrets_path=tmp_path, clock=lambda: 0.0)
    assert store.key_for("groq") is None
    (tmp_path / "groq").write_text("gsk-late")  # the directory changed
    assert store.key_for("groq") == "gsk-late"
    path = tmp_path / "keys.env"
    path.write_text("groq=one\n")
    in_file = KeyStore(env={}, secrets_path=path, clock=lambda: 0.0)
    assert in_file.key_for("groq") == "one"
    path.write_text("groq=second\n")  # rewritten: its size (or time) changed
    assert in_file.key_for("groq") == "second"


def test_missing_secrets_path_is_no_key(tmp_path: Path) -> None:
    assert KeyStore(env={}, secrets_path=tmp_path / "nope").key_for("groq") is None


def test_missing_key_names_the_variable() -> None:
    assert missing_key("open-router") == "missing key: set BENCHWARMERS_KEY_OPEN_ROUTER"
