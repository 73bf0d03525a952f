from __future__ import annotations


class BotNotFound(Exception):
    def __init__(self, slug: str) -> None:
        super().__init__(f"Бот «{slug}» не найден. Создайте его: python manage.py createbot {slug} --site URL")
        self.slug = slug
