"""Secret header values of an order endpoint, encrypted at rest (Fernet: AES-128-CBC + HMAC).

The key is ORDER_SECRETS_KEY when set, else derived from SECRET_KEY with HKDF: a database dump
alone does not reveal an API key. Changing the key makes stored headers unreadable; the lookup then
fails honestly and the admin asks for them again (SecretsUnreadable), nothing is guessed.
"""

from __future__ import annotations

import json

from django.utils.translation import gettext_noop

from core import secrets
from core.texts import stored
from knowledge.catalog.exceptions import SecretsUnreadable

_PURPOSE = b"spravka-order-headers"  # the HKDF salt these headers were always sealed with
_KEY_SETTING = "ORDER_SECRETS_KEY"


def seal(headers: dict[str, str]) -> str:
    if not headers:
        return ""
    return secrets.seal(json.dumps(headers, ensure_ascii=False), purpose=_PURPOSE, key_setting=_KEY_SETTING)


def unseal(token: str) -> dict[str, str]:
    if not token:
        return {}
    try:
        data = json.loads(secrets.unseal(token, purpose=_PURPOSE, key_setting=_KEY_SETTING))
    except (secrets.Unreadable, ValueError) as exc:
        raise SecretsUnreadable(stored(gettext_noop(
            "секретные заголовки не расшифровать: ключ изменился — введите их заново"))) from exc
    return {str(name): str(value) for name, value in data.items()}
