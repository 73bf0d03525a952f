from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VoiceConfig(AppConfig):
    name = "voice"
    label = "voice"
    verbose_name = _("Голос бота")
