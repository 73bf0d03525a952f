"""`make stop` on the embedded servers: a second pair started in a folder of its own (so the test
run's own servers are untouched) is really stopped, and its data stays for the next start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.conftest import REPO

START = "from assistant import embedded; print(embedded.database_url()); print(embedded.redis_url())"
STOP = "from assistant import embedded; embedded.stop_services()"


def _run(code: str, folder: Path) -> str:
    env = {**os.environ, "SPRAVKA_DATA_DIR": str(folder)}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def _gone(path: Path, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return not path.exists()


def test_stop_services_stops_both_embedded_servers_and_keeps_their_data():
    # A short path readable by all: PostgreSQL's socket path is length-limited, and as root the
    # server runs as a user of its own that must reach the folder.
    folder = Path(tempfile.mkdtemp(prefix="spravka-stop-", dir="/tmp"))
    folder.chmod(0o755)
    pid_file, sock = folder / "postgres" / "postmaster.pid", folder / "redis" / "redis.sock"
    try:
        _run(START, folder)
        assert pid_file.exists() and sock.exists()

        _run(STOP, folder)

        assert _gone(pid_file), "PostgreSQL is still running"
        assert _gone(sock), "Redis is still running"
        assert (folder / "postgres" / "PG_VERSION").exists()
    finally:
        _run(STOP, folder)
        shutil.rmtree(folder, ignore_errors=True)


def test_make_clean_data_removes_the_data_folder_and_its_short_tmp_twin(tmp_path):
    # A path too long for PostgreSQL's socket: the servers live in a short /tmp twin, while static
    # files and uploads stay in the configured folder. `make clean-data` must remove both.
    folder = tmp_path / ("a-checkout-path-long-enough-to-overflow-the-socket-limit-" + "x" * 30) / ".data"
    twin = Path(_run("from assistant import embedded; print(embedded.data_dir())", folder).strip())
    assert twin != folder and str(twin).startswith(tempfile.gettempdir())
    try:
        _run(START, folder)
        assert (twin / "postgres" / "postmaster.pid").exists() and folder.exists()

        env = {**os.environ, "SPRAVKA_DATA_DIR": str(folder)}
        done = subprocess.run(["make", "-s", "clean-data"], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=120, check=True)

        assert not folder.exists() and not twin.exists()
        assert f"removed {folder}" in done.stdout and f"removed {twin}" in done.stdout
    finally:
        if twin.exists():
            _run(STOP, folder)
            shutil.rmtree(twin, ignore_errors=True)
