"""`make run`: everything a person needs to see Spravka working, started by one command.

Order matters: the database is migrated before the worker starts (the worker would otherwise
crash on missing tables), and the crawl is queued only once the demo site is listening.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command

from assistant import dbpool, startup
from bots.models import Bot, Membership
from bots.services import bot_site_ensure

DEMO_SLUG = "demo"
DEMO_OWNER = "owner@demo.spravka"
DEMO_OPERATOR = "operator@demo.spravka"
DEMO_PASSWORD = "spravka-demo"  # noqa: S105 - a printed demo credential on a local machine
ADMIN_USER = "admin"


@dataclass
class DemoPorts:
    app: int = 8000
    site: int = 8001
    host: str = "127.0.0.1"

    @property
    def app_url(self) -> str:
        return f"http://{self.host}:{self.app}"

    @property
    def site_url(self) -> str:
        return f"http://{self.host}:{self.site}"


def demo_bot_ensure(ports: DemoPorts) -> Bot:
    """The demo shop's bot and its owner, with a known password so the README stays true."""
    bot = bot_site_ensure(
        slug=DEMO_SLUG, name="Демо-магазин «ТехноДом»", site_url=ports.site_url + "/",
        origins=[ports.site_url, f"http://localhost:{ports.site}"],
        # The demo shop has its own policy page: the contact form links it (152-FZ consent).
        privacy_policy_url=ports.site_url + "/privacy/",
    )
    user_model = get_user_model()
    owner, _ = user_model.objects.get_or_create(username=DEMO_OWNER, defaults={"email": DEMO_OWNER})
    owner.is_staff, owner.is_active = True, True
    owner.set_password(DEMO_PASSWORD)
    owner.save()
    Membership.objects.get_or_create(bot=bot, user=owner, defaults={"role": Membership.Role.OWNER})
    operator, _ = user_model.objects.get_or_create(
        username=DEMO_OPERATOR, defaults={"email": DEMO_OPERATOR, "first_name": "Анна"}
    )
    operator.is_active = True
    operator.set_password(DEMO_PASSWORD)
    operator.save()
    Membership.objects.update_or_create(bot=bot, user=operator, defaults={"role": Membership.Role.OPERATOR})
    admin, _ = user_model.objects.get_or_create(username=ADMIN_USER, defaults={"email": "admin@demo.spravka"})
    admin.is_staff, admin.is_superuser = True, True
    admin.set_password(DEMO_PASSWORD)
    admin.save()
    return bot


def widget_snippet(bot: Bot, ports: DemoPorts) -> str:
    return f'<script src="{ports.app_url}/static/assistant/widget.js" data-bot="{bot.public_key}" async></script>'


def demo_site_start(bot: Bot, ports: DemoPorts) -> ThreadingHTTPServer:
    from demo.server import make_server

    server = make_server(ports.host, ports.site, widget_snippet=widget_snippet(bot, ports))
    threading.Thread(target=server.serve_forever, name="demo-site", daemon=True).start()
    return server


def worker_start() -> subprocess.Popen[bytes]:
    """A Celery worker with the beat scheduler inside (re-crawls on schedule). Two processes and both
    queues: a crawl in one, the embedding of its pages in the other, side by side."""
    env = {**os.environ, "CRAWL_ALLOW_PRIVATE": "1"}
    beat_file = str(settings.BASE_DIR / ".data" / "celerybeat-schedule")
    cmd = [
        sys.executable, "-m", "celery", "--quiet", "-A", "assistant", "worker", "-B", "-s", beat_file,
        "--loglevel", "WARNING", "--without-mingle", "--without-gossip", "--concurrency", "2",
        "-Q", ",".join(settings.WORKER_QUEUES),
    ]
    # Its own process group, so stopping it also stops its pool and beat children.
    return subprocess.Popen(cmd, env=env, start_new_session=True)


def worker_stop(worker: subprocess.Popen[bytes]) -> None:
    """Warm shutdown first (a task in flight is re-queued thanks to late acks), then force."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(worker.pid, sig)
            worker.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def demo_crawl_queue(bot: Bot) -> None:
    from knowledge.crawler import crawl_start
    from knowledge.services import source_get_or_create

    source = source_get_or_create(bot=bot, kind="site", url=bot.site_url, title="Сайт демо-магазина")
    crawl_start(source=source)


def demo_reviews_import(bot: Bot) -> int:
    """demo/reviews.csv: ten customer reviews for the review-reply route (a re-import adds nothing)."""
    from routes.reviews import csv_parse, reviews_import

    path = Path(settings.BASE_DIR) / "demo" / "reviews.csv"
    return len(reviews_import(bot=bot, drafts=csv_parse(path.read_bytes())).created)


def banner(bot: Bot, ports: DemoPorts) -> str:
    return "\n".join([
        "",
        "Spravka is running. Ctrl-C stops everything.",
        f"  Demo shop with the widget:  {ports.site_url}/",
        f"  Owner dashboard:            {ports.app_url}/   {DEMO_OWNER} / {DEMO_PASSWORD}",
        f"  Admin (owner of the demo):  {ports.app_url}/admin/   {DEMO_OWNER} / {DEMO_PASSWORD}",
        f"  Admin (superuser):          {ports.app_url}/admin/   {ADMIN_USER} / {DEMO_PASSWORD}",
        f"  Operators' inbox:           {ports.app_url}/inbox/   {DEMO_OPERATOR} / {DEMO_PASSWORD}",
        f"  Try the widget as owner:    {ports.app_url}/b/{bot.slug}/setup/",
        f"  Widget key of the demo bot: {bot.public_key}",
        f"  The demo site is being crawled now; progress: {ports.app_url}/b/{bot.slug}/setup/",
        f"  E-mails to operators are written to {settings.EMAIL_FILE_PATH}/ (set EMAIL_HOST to send them).",
        "  Desktop notifications with the inbox closed: «Уведомления на рабочий стол» in the inbox (Web Push).",
        f"  Replies to the sample reviews: .venv/bin/python manage.py runroute review_reply {bot.slug}",
        f"    then Admin → Прогоны маршрутов → Очередь на решение ({ports.app_url}/admin/routes/routerun/queue/);",
        "    without ANTHROPIC_API_KEY every run ends at the handoff point (no model, no draft).",
        "",
    ])


def push_keys_ensure() -> None:
    """Web Push in the inbox works out of the box: without SPRAVKA_VAPID_* in the environment, the
    demo's own pair (made once, kept in the data folder) is used by this server and its worker."""
    from assistant import embedded
    from inbox.vapid import demo_keys

    if os.environ.get("SPRAVKA_VAPID_PUBLIC_KEY") or os.environ.get("SPRAVKA_VAPID_PRIVATE_KEY"):
        return
    for name, value in demo_keys(embedded.data_dir()).items():
        os.environ[name] = value
        setattr(settings, name, value)


def server_options(ports: DemoPorts) -> dict[str, Any]:
    """uvicorn's settings for `make run`: the production ones (assistant.asgi.SERVER_OPTIONS, the
    flags docs/deploy.md gives) on the demo's address."""
    from assistant.asgi import SERVER_OPTIONS

    return {**SERVER_OPTIONS, "host": ports.host, "port": ports.app, "log_level": "warning"}


def run(ports: DemoPorts) -> None:
    import uvicorn

    os.environ["CRAWL_ALLOW_PRIVATE"] = "1"
    settings.CRAWL_ALLOW_PRIVATE = True
    # The snippet, e-mails and webhooks name the address this demo really listens on (--port).
    os.environ["SPRAVKA_PUBLIC_URL"] = settings.SPRAVKA_PUBLIC_URL = ports.app_url
    # Without a mail server of one's own, operator alerts are written to .data/mail/ to read.
    if not os.environ.get("EMAIL_HOST") and not os.environ.get("EMAIL_BACKEND"):
        os.environ["EMAIL_BACKEND"] = "django.core.mail.backends.filebased.EmailBackend"
    push_keys_ensure()
    call_command("migrate", verbosity=0)
    bot = demo_bot_ensure(ports)
    site = demo_site_start(bot, ports)
    worker = worker_start()
    try:
        demo_crawl_queue(bot)
        demo_reviews_import(bot)
        print(banner(bot, ports), flush=True)
        dbpool.pool_serve()  # this process now serves: its connections come from the pool (DB_POOL)
        startup.warm_up()
        uvicorn.run("assistant.asgi:application", **server_options(ports))
    finally:
        worker_stop(worker)
        site.shutdown()
        print("Stopped.", flush=True)
