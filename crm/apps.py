from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CrmConfig(AppConfig):
    name = "crm"
    label = "crm"
    verbose_name = _("CRM")

    def ready(self) -> None:
        from crm import receivers  # noqa: F401  (connects the chat's lead_created)
