"""Shared fixtures: real PostgreSQL + pgvector, real Redis, a real Celery worker, the demo site on
a local port. Per-run namespacing of the database, queue and cache is in assistant/testing.py."""

from __future__ import annotations

import asyncio
import io
import socket
import threading
import time
from collections.abc import Iterator
from email import policy as email_policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
# Samples of the evaluation sets, shipped in the repository (tests/data/SOURCE.md: origin, licence),
# laid out like the full sets in ../shared/eval-data/, which only the benchmarks read.
EVAL_DATA = REPO / "tests" / "data"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A test stopped by pytest-timeout (a hang) reports every unfinished asyncio task's stack too:
    the thread stacks alone show an event loop waiting, not what it waits for."""
    report = yield
    if report.failed and call.excinfo is not None and "pytest-timeout" in str(call.excinfo.value):
        out = io.StringIO()
        for task in list(getattr(asyncio.tasks, "_all_tasks", ())):
            if not task.done():
                out.write(f"{task!r}\n")
                task.print_stack(limit=25, file=out)
        report.sections.append(("unfinished asyncio tasks", out.getvalue() or "none"))
    return report


@pytest.fixture(scope="session", autouse=True)
def _chat_worker_connections_closed(django_db_setup, django_db_blocker):
    """The widget consumer's worker threads keep their database connections between calls, as in
    production; close them before the test database is dropped at the end of the session."""
    yield
    from chat.consumers import close_db_connections

    close_db_connections()


@pytest.fixture(scope="session", autouse=True)
def _cache_namespace_empty() -> None:
    """The run's cache namespace is named after its process id (assistant/testing.py), and ids come
    round again (pid_max is 32768 on small machines) while the embedded Redis keeps what earlier runs
    wrote: a budget limit for a week, a budget alert for 40 days, a settings token for ever, each
    keyed by a bot id. This run's test database is new and numbers its bots from 1 again, so a bot
    here could read the budget of another run's bot with the same id and never ask the model. Every
    session starts with its own namespace empty (only its own: other runs share the server)."""
    import redis
    from django.conf import settings

    prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
    if not prefix.startswith("spravka-test-"):
        return  # a namespace set by hand (CACHE_PREFIX) may be an installation's own: left alone
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        for start in range(0, len(keys), 1000):
            client.delete(*keys[start:start + 1000])
    finally:
        client.close()


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user(
        username="owner@shop.example", email="owner@shop.example", password="pw-owner-1", is_staff=True
    )


@pytest.fixture
def other_owner(django_user_model):
    return django_user_model.objects.create_user(
        username="owner@other.example", email="owner@other.example", password="pw-other-1", is_staff=True
    )


@pytest.fixture
def bot(owner):
    from bots.models import Bot, Membership

    bot = Bot.objects.create(name="Демо-магазин", slug="demo", site_url="http://127.0.0.1/")
    Membership.objects.create(bot=bot, user=owner, role=Membership.Role.OWNER)
    return bot


@pytest.fixture
def owner_on_hand(owner):
    """The demo bot's owner has the inbox open (chat/presence.py): a visitor who asks for a person
    hears that one will come, not that nobody is there."""
    from chat import presence

    presence.presence_seen(owner)
    return owner


@pytest.fixture
def other_bot(other_owner):
    from bots.models import Bot, Membership

    bot = Bot.objects.create(name="Чужой магазин", slug="other", site_url="http://127.0.0.2/")
    Membership.objects.create(bot=bot, user=other_owner, role=Membership.Role.OWNER)
    return bot


@pytest.fixture
def celery_worker_thread(transactional_db) -> Iterator[object]:
    """A real Celery worker (threads pool) consuming this run's queues (tasks and embedding) on the
    real Redis broker."""
    from celery.contrib.testing.worker import start_worker
    from django.conf import settings

    from assistant.celery import app

    with start_worker(app, pool="threads", concurrency=2, perform_ping_check=False, loglevel="WARNING",
                      queues=settings.WORKER_QUEUES) as worker:
        yield worker


@pytest.fixture
def demo_site() -> Iterator[str]:
    """The demo shop served on a free local port; yields its origin, e.g. http://127.0.0.1:41234."""
    from demo.server import make_server

    server = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Mailbox:
    """What a real local SMTP server received: one `email.message.EmailMessage` per message."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.host = "127.0.0.1"
        self.port = 0

    async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:  # aiosmtpd calls this name
        message = BytesParser(policy=email_policy.default).parsebytes(envelope.content)
        message["X-Envelope-To"] = ", ".join(envelope.rcpt_tos)
        self.messages.append(message)
        return "250 OK"

    def wait_for(self, count: int = 1, timeout: float = 15.0) -> list[EmailMessage]:
        """The first `count` messages, waiting for them to arrive (a Celery task sends them)."""
        deadline = time.monotonic() + timeout
        while len(self.messages) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {count} e-mail(s), got {len(self.messages)}")
            time.sleep(0.05)
        return self.messages[:count]


@pytest.fixture
def smtp_server(settings) -> Iterator[Mailbox]:
    """A real SMTP server (aiosmtpd) on a free local port, with Django's SMTP backend pointed at it."""
    from aiosmtpd.controller import Controller

    mailbox = Mailbox()
    with socket.socket() as probe:  # the controller checks readiness by connecting: it needs a real port
        probe.bind(("127.0.0.1", 0))
        mailbox.port = int(probe.getsockname()[1])
    controller = Controller(mailbox, hostname=mailbox.host, port=mailbox.port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = mailbox.host, mailbox.port
    settings.EMAIL_USE_TLS, settings.EMAIL_HOST_USER, settings.EMAIL_HOST_PASSWORD = False, "", ""
    try:
        yield mailbox
    finally:
        controller.stop()


@pytest.fixture(autouse=True)
def _fresh_rate_limits(settings: Any) -> Iterator[None]:
    """Every test starts with empty rate-limit windows and socket counts (they live in the run's
    own Redis namespace, which tests would otherwise share within a minute's window). Windows are
    an hour long in tests: with a minute, a test's few writes now and then straddled a window's
    end and the last one, meant to be refused, started a fresh count."""
    settings.CHAT_RATE_WINDOW = 3600
    yield
    import redis
    from django.conf import settings

    prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        for pattern in (f"{prefix}:chat:rate:*", f"{prefix}:chat:sockets:*"):
            keys = list(client.scan_iter(match=pattern, count=1000))
            if keys:
                client.delete(*keys)
    finally:
        client.close()


@pytest.fixture(autouse=True)
def _language_back_to_the_installation_s(settings: Any) -> Iterator[None]:
    """A request in English leaves English active in this thread (LocaleMiddleware activates the
    request's language and nothing deactivates it): every test ends back in the installation's
    language, so the next one (a command's output, a stored text read back) starts in Russian."""
    from django.utils import translation

    yield
    translation.activate(settings.LANGUAGE_CODE)
