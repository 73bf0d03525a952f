from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from inbox.vapid import keys_generate


class Command(BaseCommand):
    help = ("Print a fresh VAPID key pair for Web Push to the operators' browsers, as environment variables "
            "(SPRAVKA_VAPID_PUBLIC_KEY, SPRAVKA_VAPID_PRIVATE_KEY, SPRAVKA_VAPID_SUBJECT; docs/deploy.md).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--subject", default="mailto:admin@example.com",
                            help="Who the push services may contact: mailto:you@your.domain or https://your.site")

    def handle(self, *args: Any, **options: Any) -> None:
        subject = str(options["subject"])
        if not subject.startswith(("mailto:", "https://")):
            self.stderr.write("--subject must start with mailto: or https://")
            raise SystemExit(2)
        public, private = keys_generate()
        self.stdout.write(f"SPRAVKA_VAPID_PUBLIC_KEY={public}")
        self.stdout.write(f"SPRAVKA_VAPID_PRIVATE_KEY={private}")
        self.stdout.write(f"SPRAVKA_VAPID_SUBJECT={subject}")
