from __future__ import annotations

from django.utils.translation import gettext as _


class BotNotFound(Exception):
    def __init__(self, slug: str) -> None:
        shown = slug.encode("utf-8", "backslashreplace").decode("utf-8")[:64]  # printable whatever it was
        super().__init__(_("Бот «%(slug)s» не найден. Создайте его: python manage.py createbot %(slug)s --site URL") % {
            "slug": shown})
        self.slug = slug
