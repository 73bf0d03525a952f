from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = _("Проверка ответов")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from review import receivers

        receivers.connect()
