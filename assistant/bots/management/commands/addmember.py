from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.bots.exceptions import BotNotFound
from assistant.bots.models import Membership
from assistant.bots.selectors import bot_by_slug
from assistant.bots.services import membership_add

WHERE = {
    Membership.Role.OWNER: "входит в админку: /admin/ (настройки и знания бота)",
    Membership.Role.OPERATOR: "входит на /accounts/login/ и отвечает посетителям во входящих: /inbox/",
}


class Command(BaseCommand):
    help = "Дать человеку роль в боте: addmember SLUG EMAIL --role owner|operator [--password P]"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="код бота")
        parser.add_argument("email", help="e-mail, он же логин; учётная запись создаётся, если её нет")
        parser.add_argument("--role", required=True, help="owner (владелец) или operator (оператор)")
        parser.add_argument("--password", default="", help="пароль новой учётной записи (иначе будет создан)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
            result = membership_add(
                bot=bot, email=options["email"], role=options["role"].strip().lower(), password=options["password"]
            )
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        membership = result.membership
        user, role = membership.user, Membership.Role(membership.role)
        if result.previous_role:
            what = f"теперь {role.label} (была роль: {Membership.Role(result.previous_role).label})"
        elif result.membership_created:
            what = str(role.label)
        else:
            what = f"уже {role.label}"
        self.stdout.write(self.style.SUCCESS(f"{user.username} — {what} бота «{bot.slug}»; {WHERE[role]}"))
        if result.password:
            self.stdout.write(f"Новая учётная запись: {user.username} / пароль: {result.password}")
        elif result.user_created:
            self.stdout.write(f"Новая учётная запись: {user.username}, пароль задан в --password")
        elif options["password"]:
            self.stdout.write("Учётная запись уже была: её пароль не изменён (--password только для новой).")

