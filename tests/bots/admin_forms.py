"""The POST data of the bot's admin page, built from the bot as the page would send it back."""

from __future__ import annotations

import json
from typing import Any

from django.forms.models import model_to_dict

from bots.models import Bot

# The inlines on the bot's page for an owner (the memberships are the superuser's).
INLINES = ("opening_hours", "holidays")


def bot_form_data(bot: Bot, *, inlines: tuple[str, ...] = INLINES, **changes: Any) -> dict[str, Any]:
    admin_form = {"public_key", "webhook_secret", "created_at", "id"}
    data: dict[str, Any] = {}
    for name, value in {**model_to_dict(bot), **changes}.items():
        if name in admin_form or value is None or value is False:
            continue
        if value is True:
            data[name] = "on"
        elif isinstance(value, list):
            data[name] = json.dumps(value)
        else:
            data[name] = value
    for prefix in inlines:
        data.update({f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0",
                     f"{prefix}-MIN_NUM_FORMS": "0", f"{prefix}-MAX_NUM_FORMS": "1000"})
    return data
