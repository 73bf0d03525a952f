"""What a serving process checks before it takes its first request. `manage.py runserver` runs
Django's system checks; `uvicorn assistant.asgi:application` (production, `make run`, the tests'
servers) runs no management command, so a misconfiguration (a CSRF_TRUSTED_ORIGINS value without
a scheme, a SPRAVKA_LANGUAGE that is not one of LANGUAGES, a broken URLconf) used to start a server
that failed later, request by request. `system_check` makes it refuse to start instead.

Deployment checks (`check --deploy`) are not run here: they judge an installation's security
settings, which docs/deploy.md and the production settings own; a development server would fail them.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.core import checks
from django.core.management.base import SystemCheckError

logger = logging.getLogger("spravka")


def system_check() -> None:
    """Django's system checks (no database, no deployment checks), as `manage.py check` runs them.
    Errors raise SystemCheckError with every message (the server does not start); warnings are
    logged and the server starts."""
    found = checks.run_checks(include_deployment_checks=False)
    serious = [message for message in found if message.is_serious() and not message.is_silenced()]
    for message in found:
        if not message.is_serious() and not message.is_silenced():
            logger.warning("system check: %s", message)
    if serious:
        lines = "\n".join(str(message) for message in serious)
        raise SystemCheckError(f"The server does not start: the system checks found {len(serious)} error(s):\n{lines}")


def _warm() -> None:
    started = time.monotonic()
    try:
        import llm.anthropic_provider  # noqa: F401  (imports the model SDK: ~1.4 s for anthropic here)
        from knowledge.embeddings import get_embedder

        get_embedder().query("доставка")  # loads the default embedding model (~1 s here)
        from knowledge import paraphrase

        paraphrase.warm_up()  # pymorphy3's and wordfreq's dictionaries: the corrections' rule (~1 s)
        if settings.LLM_PROVIDER == "none":  # typos are the speller's to read, not a model's (~3 s, ~70 MB)
            from knowledge import spelling

            spelling.warm_up()
    except Exception:  # the first question pays for it then, as before; the server keeps serving
        logger.exception("warm-up failed")
        return
    logger.info("warm-up: the model SDKs, the embedding model and the dictionaries loaded in %.1f s",
                time.monotonic() - started)


def warm_up() -> threading.Thread:
    """Load in the background what the first question of a process would otherwise load inside its
    turn: the model SDKs (imported on the first model call) and the embedding model (on the first
    search). Both count against the turn's model deadline (CHAT_LLM_TIMEOUT runs from the turn's
    start), so the first visitor after a restart waited ~2.5 s more and, with a short deadline, got
    the retrieval answer without the model being asked. Python's import lock and the embedder's
    cache make a question arriving meanwhile wait for the same load, not start a second."""
    thread = threading.Thread(target=_warm, name="spravka-warm-up", daemon=True)
    thread.start()
    return thread
