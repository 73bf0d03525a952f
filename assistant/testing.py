"""A pytest plugin loaded with `-p assistant.testing` (see pyproject.toml) before pytest-django
reads the settings: it namespaces everything a test run creates by process id, so two runs on
one machine (two clones, CI beside a developer) never share a database, queue or cache."""

from __future__ import annotations

import os

_RUN = str(os.getpid())
os.environ.setdefault("SPRAVKA_TEST_DB", f"test_spravka_{_RUN}")
os.environ.setdefault("CELERY_QUEUE", f"spravka-test-{_RUN}")
os.environ.setdefault("CHANNELS_PREFIX", f"spravka-test-{_RUN}")
os.environ.setdefault("CACHE_PREFIX", f"spravka-test-{_RUN}")
os.environ.setdefault("CRAWL_ALLOW_PRIVATE", "1")
os.environ.setdefault("CRAWL_DELAY", "0")
# Tests talk to the local fake Messages API only (tests/fakes); never to a real provider.
for _name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "LLM_OPENAI_BASE_URL", "LLM_OPENAI_API_KEY"):
    os.environ.pop(_name, None)
os.environ["LLM_PROVIDER"] = "none"
