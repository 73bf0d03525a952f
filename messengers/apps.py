from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MessengersConfig(AppConfig):
    name = "messengers"
    label = "messengers"
    verbose_name = _("Мессенджеры")

    def ready(self) -> None:
        from messengers import receivers  # noqa: F401  (connects the chat's visitor_told)
