"""`manage.py ask SLUG "вопрос" [--json]`: ask a bot one question from the command line, through
the same services and answer chain a visitor's widget uses.

The --json output is a contract (scripts, evaluations and the REST API's ask/ share it): see
chat/contracts.py.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.exceptions import BotNotFound
from bots.selectors import bot_by_slug
from chat.contracts import reply_json
from chat.exceptions import ChatError
from chat.services import conversation_ask_once


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _('Задать боту вопрос: ask SLUG "вопрос" [--json]')

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("question")
        parser.add_argument("--json", action="store_true", help=_("ответ одним объектом JSON"))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
            reply = conversation_ask_once(bot=bot, text=options["question"])
        except (BotNotFound, ChatError) as exc:
            raise CommandError(str(exc)) from exc
        if reply is None:  # cannot happen in a fresh conversation; say so rather than print nothing
            raise CommandError(_("Бот не ответил: разговор передан оператору."))
        if options["json"]:
            self.stdout.write(json.dumps(reply_json(reply), ensure_ascii=False))
            return
        self.stdout.write(reply.text)
        for link in reply.links:
            self.stdout.write(f"→ {link.get('title', '')}: {link.get('url', '')}")
        for button in reply.buttons:
            self.stdout.write(f"[{button.get('label', '')}]")
