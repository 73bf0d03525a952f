from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bots.exceptions import BotNotFound
from bots.models import Membership
from bots.selectors import bot_by_slug
from bots.services import membership_add

WHERE = {
    Membership.Role.OWNER: gettext_lazy(
        "входит на /accounts/login/ и попадает в кабинет владельца: обзор бота, знания, настройки"
    ),
    Membership.Role.OPERATOR: gettext_lazy("входит на /accounts/login/ и отвечает посетителям во входящих: /inbox/"),
}


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Дать человеку роль в боте: addmember SLUG EMAIL --role owner|operator [--password P]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help=_("код бота"))
        parser.add_argument("email", help=_("e-mail, он же логин; учётная запись создаётся, если её нет"))
        parser.add_argument("--role", required=True, help=_("owner (владелец) или operator (оператор)"))
        parser.add_argument("--password", default="", help=_("пароль новой учётной записи (иначе будет создан)"))

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
            what = _("теперь %(role)s (была роль: %(before)s)") % {
                "role": role.label, "before": Membership.Role(result.previous_role).label}
        elif result.membership_created:
            what = str(role.label)
        else:
            what = _("уже %(role)s") % {"role": role.label}
        self.stdout.write(self.style.SUCCESS(_("%(user)s — %(what)s бота «%(slug)s»; %(where)s") % {
            "user": user.username, "what": what, "slug": bot.slug, "where": WHERE[role]}))
        if result.password:
            self.stdout.write(_("Новая учётная запись: %(user)s / пароль: %(password)s") % {
                "user": user.username, "password": result.password})
        elif result.user_created:
            self.stdout.write(_("Новая учётная запись: %(user)s, пароль задан в --password") % {"user": user.username})
        elif options["password"]:
            self.stdout.write(_("Учётная запись уже была: её пароль не изменён (--password только для новой)."))

