from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InboxConfig(AppConfig):
    name = "inbox"
    label = "inbox"
    verbose_name = _("Входящие операторов")

    def ready(self) -> None:
        from inbox import receivers

        receivers.connect()
