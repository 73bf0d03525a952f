from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MessengersConfig(AppConfig):
    name = "messengers"
    label = "messengers"
    verbose_name = _("Мессенджеры")

    def ready(self) -> None:
        from chat import presence
        from messengers import operators, receivers  # noqa: F401  (receivers connects the chat's signals)

        presence.reached_elsewhere_register(operators.anyone_linked)
