from __future__ import annotations


class BotNotFound(Exception):
    def __init__(self, slug: str) -> None:
        shown = slug.encode("utf-8", "backslashreplace").decode("utf-8")[:64]  # printable whatever it was
        super().__init__(f"Бот «{shown}» не найден. Создайте его: python manage.py createbot {shown} --site URL")
        self.slug = slug
