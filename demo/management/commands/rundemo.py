from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from demo.run import DemoPorts, run


class Command(BaseCommand):
    help = "Serve the demo: demo shop with the widget, admin, a Celery worker; crawls the shop."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--site-port", type=int, default=8001)

    def handle(self, *args: Any, **options: Any) -> None:
        run(DemoPorts(app=options["port"], site=options["site_port"]))
