from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TuningConfig(AppConfig):
    name = "owner.tuning"
    label = "tuning"
    verbose_name = _("Настройка бота")
