from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FeedbackConfig(AppConfig):
    name = "feedback"
    verbose_name = _("Обратная связь")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from feedback import receivers
        from llm.labels import route_words_add

        receivers.connect()
        route_words_add("gaps", _("Объединение похожих вопросов в «Пробелах»"))
