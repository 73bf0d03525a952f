"""A served app runs Django's system checks when it starts: a real `uvicorn` process with a
misconfiguration exits at once with the check's message, a sound one serves (tests/chat/test_consumers_uvicorn
and the browser tests start it that way), and warnings are logged without stopping it."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core import checks
from django.core.management.base import SystemCheckError

from assistant.startup import system_check
from tests.chat.test_consumers_uvicorn import _database_url, _free_port, running_uvicorn
from tests.conftest import REPO


def _serve(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    from django.conf import settings

    server_env = os.environ | {"DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL} | env
    return subprocess.run(
        [sys.executable, "-m", "uvicorn", "assistant.asgi:application", "--host", "127.0.0.1",
         "--port", str(_free_port()), "--log-level", "warning"],
        cwd=REPO, env=server_env, capture_output=True, text=True, timeout=120, check=False,
    )


def test_uvicorn_refuses_to_start_with_a_misconfiguration():
    result = _serve({"CSRF_TRUSTED_ORIGINS": "shop.example"})  # no scheme: Django's 4_0.E001
    assert result.returncode != 0
    assert "The server does not start: the system checks found 1 error(s)" in result.stderr
    assert "(4_0.E001)" in result.stderr and "shop.example" in result.stderr


@pytest.mark.django_db(transaction=True)
def test_uvicorn_starts_and_serves_when_the_checks_pass(tmp_path: Path):
    import urllib.request

    with running_uvicorn(tmp_path / "uvicorn.log") as url:
        with urllib.request.urlopen(url.replace("ws://", "http://") + "/accounts/login/", timeout=30) as response:
            assert response.status == 200


@pytest.fixture
def extra_check() -> Iterator[list[checks.CheckMessage]]:
    """A check of this test's own, returning what the test puts in the list."""
    said: list[checks.CheckMessage] = []

    def check(**kwargs: object) -> list[checks.CheckMessage]:
        return list(said)

    checks.register(check)
    try:
        yield said
    finally:
        checks.registry.registry.registered_checks.discard(check)


def test_a_warning_is_logged_and_does_not_stop_the_start(extra_check, caplog):
    extra_check.append(checks.Warning("Порог совпадения выглядит странно.", id="spravka.W900"))
    with caplog.at_level(logging.WARNING, logger="spravka"):
        system_check()
    assert "spravka.W900" in caplog.text


def test_every_error_is_named(extra_check):
    extra_check.extend([checks.Error("первая", id="spravka.E901"), checks.Critical("вторая", id="spravka.E902")])
    with pytest.raises(SystemCheckError) as raised:
        system_check()
    assert "found 2 error(s)" in str(raised.value)
    assert "spravka.E901" in str(raised.value) and "spravka.E902" in str(raised.value)


WARM_UP = """
import sys, django
django.setup()
from knowledge import embeddings
before = ("anthropic" in sys.modules, embeddings._load.cache_info().currsize)
from assistant.startup import warm_up
warm_up().join()
print(before, ("anthropic" in sys.modules, embeddings._load.cache_info().currsize))
"""


def test_the_warm_up_loads_the_model_sdk_and_the_embedding_model_before_the_first_question():
    from django.conf import settings

    env = os.environ | {"DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
                        "DJANGO_SETTINGS_MODULE": "assistant.settings"}
    result = subprocess.run([sys.executable, "-c", WARM_UP], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=120, check=True)
    assert result.stdout.split("\n")[-2] == "(False, 0) (True, 1)", result.stdout + result.stderr


WARM_UP_SPELLER = """
import django
django.setup()
from knowledge import spelling
before = spelling.language_speller.cache_info().currsize
from assistant.startup import warm_up
warm_up().join()
print(before, spelling.language_speller.cache_info().currsize)
"""


def test_without_a_model_the_warm_up_loads_the_spellers_dictionary_too():
    from django.conf import settings

    env = os.environ | {"DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
                        "DJANGO_SETTINGS_MODULE": "assistant.settings", "LLM_PROVIDER": "none"}
    result = subprocess.run([sys.executable, "-c", WARM_UP_SPELLER], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=120, check=True)
    assert result.stdout.split("\n")[-2] == "0 1", result.stdout + result.stderr


WORKER_CHILD = """
import sys, threading, django
django.setup()
from celery.signals import worker_process_init
import assistant.celery  # noqa: F401  (connects the worker's receivers)
before = "anthropic" in sys.modules
worker_process_init.send(sender=None)
[warming] = [t for t in threading.enumerate() if t.name == "spravka-warm-up"]
warming.join()
print(before, "anthropic" in sys.modules)
"""


def test_a_worker_child_warms_up_before_its_first_turn():
    """A prefork worker's child (the production worker, docs/deploy.md) loads what a turn needs on start."""
    from django.conf import settings

    env = os.environ | {"DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL,
                        "DJANGO_SETTINGS_MODULE": "assistant.settings"}
    result = subprocess.run([sys.executable, "-c", WORKER_CHILD], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=120, check=True)
    assert result.stdout.split("\n")[-2] == "False True", result.stdout + result.stderr
