from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BehaviorConfig(AppConfig):
    name = "behavior"
    label = "behavior"
    verbose_name = _("Поведение")
