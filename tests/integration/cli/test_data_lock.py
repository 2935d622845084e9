"""One `bench up` per data folder, held with a lock the kernel drops however the holder ends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli import data_lock

ROOT = Path(__file__).resolve().parents[3]
HOLDER = """
import sys, time
from pathlib import Path
from cli import data_lock
with data_lock.held(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_held_folder_names_its_holder_and_is_free_again_after(tmp_path: Path) -> None:
    assert data_lock.holder(tmp_path) is None
    with data_lock.held(tmp_path):
        found = data_lock.holder(tmp_path)
        assert found is not None and found.pid == os.getpid()
        with pytest.raises(data_lock.InUse) as raised, data_lock.held(tmp_path):
            pass
        assert str(raised.value) == (f"bench up (pid {os.getpid()}) is already running for {tmp_path}; "
                                     f"`bench down` (or `kill {os.getpid()}`) stops it")
    assert data_lock.holder(tmp_path) is None
    assert not (tmp_path / data_lock.LOCK_FILE).exists()


def test_the_file_of_a_killed_holder_blocks_nothing(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        found = data_lock.holder(tmp_path)
        assert found is not None and found.pid == holder.pid
    finally:
        holder.kill()
        holder.wait(10)
    assert (tmp_path / data_lock.LOCK_FILE).read_text().strip() == str(holder.pid)  # left behind
    assert data_lock.holder(tmp_path) is None
    with data_lock.held(tmp_path):
        found = data_lock.holder(tmp_path)
        assert found is not None and found.pid == os.getpid()
