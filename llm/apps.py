from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LLMConfig(AppConfig):
    name = "llm"
    label = "llm"
    verbose_name = _("Языковые модели")
