"""The data folder's secrets file: written whole with mode 0600, other keys kept, the callers' reader finds
what it wrote (file, JSON or folder form), and a failed add puts the old file back."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from cli import secrets_file
from services.caller.keys import KeyStore


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_key_is_stored_private_and_read_by_the_callers(tmp_path: Path) -> None:
    path = secrets_file.secrets_path(tmp_path / "home", env={})
    assert path == tmp_path / "home" / "secrets.env"
    secrets_file.store_key(path, "open-router", "sk-or-first")
    secrets_file.store_key(path, "other", "sk-other")
    saved = secrets_file.store_key(path, "open-router", "sk-or-second")
    assert mode(path) == 0o600 and list(path.parent.glob(".*tmp")) == []
    store = KeyStore(env={}, secrets_path=path)
    assert (store.key_for("open-router"), store.key_for("other")) == ("sk-or-second", "sk-other")
    secrets_file.restore(saved)
    assert KeyStore(env={}, secrets_path=path).key_for("open-router") == "sk-or-first"


def test_a_json_file_stays_json_and_a_folder_gets_one_file_per_key(tmp_path: Path) -> None:
    as_json = tmp_path / "keys.json"
    as_json.write_text(json.dumps({"BENCHWARMERS_KEY_A": "sk-a"}))
    secrets_file.store_key(as_json, "b", "sk-b")
    assert json.loads(as_json.read_text()) == {"BENCHWARMERS_KEY_A": "sk-a", "BENCHWARMERS_KEY_B": "sk-b"}
    folder = tmp_path / "mounted"
    folder.mkdir()
    saved = secrets_file.store_key(folder, "c", "sk-c")
    assert KeyStore(env={}, secrets_path=folder).key_for("c") == "sk-c"
    assert mode(folder / "BENCHWARMERS_KEY_C") == 0o600
    secrets_file.restore(saved)
    assert not (folder / "BENCHWARMERS_KEY_C").exists()


@pytest.mark.parametrize("bad", ["", "   ", "two words", "x" * 5000, "tab\there"])
def test_a_key_that_is_not_one_printable_word_is_refused_without_echoing_it(tmp_path: Path, bad: str) -> None:
    with pytest.raises(secrets_file.BadKey) as refused:
        secrets_file.store_key(tmp_path / "s.env", "x", bad)
    assert (bad.strip() or "<none>") not in str(refused.value)
    assert not (tmp_path / "s.env").exists()
