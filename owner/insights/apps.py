from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InsightsConfig(AppConfig):
    """Owner pages that look at the bot from above: hit testing and batch test sets, usage and
    costs, members. Reads the lower apps through their selectors and services."""

    name = "owner.insights"
    label = "insights"
    verbose_name = _("Проверка и расходы")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from owner.insights import receivers

        receivers.connect()
