"""A pytest plugin loaded with `-p assistant.testing` (see pyproject.toml) before pytest-django
reads the settings: it namespaces everything a test run creates by process id, so two runs on
one machine (two clones, CI beside a developer) never share a database, queue or cache.

Under pytest-xdist (`make test` runs `-n`), each worker inherits the run's names from the process
that started it and adds its own id (gw0, gw1…) to the queue, channel and cache names, so a Celery
worker of one test process never takes another's task; pytest-django adds the same id to the
test database's name."""

from __future__ import annotations

import os

_RUN = str(os.getpid())
os.environ.setdefault("SPRAVKA_TEST_DB", f"test_spravka_{_RUN}")
os.environ.setdefault("CELERY_QUEUE", f"spravka-test-{_RUN}")
os.environ.setdefault("CHANNELS_PREFIX", f"spravka-test-{_RUN}")
os.environ.setdefault("CACHE_PREFIX", f"spravka-test-{_RUN}")
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _WORKER and not os.environ.get("SPRAVKA_TEST_WORKER"):
    os.environ["SPRAVKA_TEST_WORKER"] = _WORKER  # once: the names are suffixed a single time
    for _name in ("CELERY_QUEUE", "CHANNELS_PREFIX", "CACHE_PREFIX"):
        os.environ[_name] = f"{os.environ[_name]}-{_WORKER}"
    os.environ.pop("CELERY_EMBED_QUEUE", None)  # follows CELERY_QUEUE (settings.py)
os.environ.setdefault("CRAWL_ALLOW_PRIVATE", "1")
os.environ.setdefault("CRAWL_DELAY", "0")
# Tests talk to the local fake Messages API only (tests/fakes); never to a real provider.
for _name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "LLM_OPENAI_BASE_URL", "LLM_OPENAI_API_KEY"):
    os.environ.pop(_name, None)
os.environ["LLM_PROVIDER"] = "none"
