#!/usr/bin/env python
"""Django's command-line utility for Spravka."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")
    from django.core.management import execute_from_command_line

    from assistant.env import EnvError

    try:
        execute_from_command_line(sys.argv)
    except EnvError as exc:  # a forgotten or malformed variable: the message says which, no traceback
        sys.exit(f"Spravka cannot start: {exc}")


if __name__ == "__main__":
    main()
