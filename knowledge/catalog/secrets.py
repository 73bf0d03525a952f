"""Secret header values of an order endpoint, encrypted at rest (Fernet: AES-128-CBC + HMAC).

The key is ORDER_SECRETS_KEY when set, else derived from SECRET_KEY with HKDF: a database dump
alone does not reveal an API key. Changing the key makes stored headers unreadable; the lookup then
fails honestly and the admin asks for them again (SecretsUnreadable), nothing is guessed.
"""

from __future__ import annotations

import base64
import json

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.utils.translation import gettext_noop

from core.texts import stored
from knowledge.catalog.exceptions import SecretsUnreadable


def _fernet() -> Fernet:
    material = (getattr(settings, "ORDER_SECRETS_KEY", "") or settings.SECRET_KEY).encode()
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"spravka-order-headers", info=b"v1").derive(material)
    return Fernet(base64.urlsafe_b64encode(key))


def seal(headers: dict[str, str]) -> str:
    return _fernet().encrypt(json.dumps(headers, ensure_ascii=False).encode()).decode() if headers else ""


def unseal(token: str) -> dict[str, str]:
    if not token:
        return {}
    try:
        data = json.loads(_fernet().decrypt(token.encode()))
    except (InvalidToken, ValueError) as exc:
        raise SecretsUnreadable(stored(gettext_noop(
            "секретные заголовки не расшифровать: ключ изменился — введите их заново"))) from exc
    return {str(name): str(value) for name, value in data.items()}
