"""Fault tests: the chat fixtures (a shop bot with a little real knowledge), the fake Messages API,
and a `fleet` of real processes (uvicorn, Celery, Redis, PostgreSQL of their own) on the test
database, all ended after the test whatever happened."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.chat.conftest import knowledge, shop  # noqa: F401 - fixtures
from tests.fakes import (
    FAKE_ANTHROPIC_KEY,
    fake_llm,  # noqa: F401 - fixture
)
from tests.faults.harness import Fleet, database_url

APP_NAME = "spravka-faults-app"  # libpq tags the app processes' sessions with it (PGAPPNAME)


@pytest.fixture
def fleet(transactional_db: None) -> Iterator[Fleet]:
    """Processes on this test's database and Redis (both may be overridden per process), without a
    model (LLM_PROVIDER=none) unless the test points them at the fake (`model_env`)."""
    from django.conf import settings
    from django.db import connection

    env = os.environ | {
        "DATABASE_URL": database_url(connection.settings_dict), "REDIS_URL": settings.REDIS_URL,
        "LLM_PROVIDER": "none", "ANTHROPIC_API_KEY": "", "DEBUG": "0", "PGAPPNAME": APP_NAME,
        "SPRAVKA_LOG_LEVEL": "INFO",
    }
    with Fleet(env) as processes:
        yield processes
    wait_for_app_sessions_to_end()


def model_env(base_url: str, timeout: float = 60.0) -> dict[str, str]:
    """The app's model: the fake Messages API at `base_url`, no retries, `timeout` per turn."""
    return {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": base_url,
            "LLM_TIMEOUT": str(timeout), "CHAT_LLM_TIMEOUT": str(timeout), "LLM_MAX_RETRIES": "0"}


def wait_for_app_sessions_to_end(timeout: float = 15.0) -> None:
    """PostgreSQL ends a killed client's sessions a moment later; the test database is flushed
    (and at the end dropped) only once they are gone."""
    from django.db import connection

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND application_name = %s", [APP_NAME])
            (left,) = cursor.fetchone() or (0,)
        if not left:
            return
        time.sleep(0.1)
