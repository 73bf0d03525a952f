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
