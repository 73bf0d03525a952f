from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RoutesConfig(AppConfig):
    """Async routes with bounded self-correction (docs/architecture.md, "Routes with a judge"), above
    chat, knowledge and llm."""

    name = "routes"
    verbose_name = _("Маршруты и ответы на отзывы")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from llm.labels import route_words_add
        from routes import checks  # noqa: F401  (registers the declarations' system check)
        from routes.declarations import ROUTES

        for route in ROUTES.values():  # usage lines and the journal name them by their titles
            route_words_add(route.name, _(route.title))
