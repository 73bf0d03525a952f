"""`{% push_config as push %}`: what templates/inbox/base.html gives static/assistant/inbox-push.js
(the VAPID public key, the addresses, the texts); an empty key when Web Push is off."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse
from django.utils.translation import gettext as _

from inbox import push

register = template.Library()


@register.simple_tag
def push_config() -> dict[str, Any]:
    key = push.public_key()
    if not key:
        return {"key": ""}
    return {
        "key": key,
        "worker": reverse("inbox:service_worker"), "scope": reverse("inbox:index"),
        "subscribe": reverse("inbox:push_subscribe"), "unsubscribe": reverse("inbox:push_unsubscribe"),
        "texts": {
            "on": _("включены"), "off": _("выключены"), "denied": _("браузер запретил"),
            "working": _("подключаем…"), "unsupported": _("этот браузер не умеет"),
            "failed": _("не удалось: {reason}"),
            "denied_hint": _("Уведомления запрещены в настройках браузера для этого сайта: разрешите их там."),
        },
    }
