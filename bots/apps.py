from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BotsConfig(AppConfig):
    name = "bots"
    label = "bots"
    verbose_name = _("Боты")

    def ready(self) -> None:
        from bots import freshness  # noqa: F401 - connects its receivers
