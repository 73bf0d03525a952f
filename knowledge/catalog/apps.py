from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CommerceConfig(AppConfig):
    name = "knowledge.catalog"
    label = "commerce"
    verbose_name = _("Заказы и каталог")
