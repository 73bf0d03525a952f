"""Secrets kept encrypted at rest (Fernet: AES-128-CBC + HMAC), each purpose with its own key.

A key is derived with HKDF from the project's secret (a setting naming a key of its own when set,
else SECRET_KEY) and the purpose, so a database dump alone reveals no token, and one purpose's
ciphertext is unreadable as another's. Changing the key makes stored secrets unreadable: `unseal`
raises `Unreadable` and the caller asks the owner for the secret again; nothing is guessed.
"""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings


class Unreadable(Exception):
    """The secret was sealed with another key."""


def _fernet(purpose: bytes, key_setting: str) -> Fernet:
    material = (getattr(settings, key_setting, "") or settings.SECRET_KEY).encode()
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=purpose, info=b"v1").derive(material)
    return Fernet(base64.urlsafe_b64encode(key))


def seal(text: str, *, purpose: bytes, key_setting: str = "SECRETS_KEY") -> str:
    return _fernet(purpose, key_setting).encrypt(text.encode()).decode() if text else ""


def unseal(token: str, *, purpose: bytes, key_setting: str = "SECRETS_KEY") -> str:
    if not token:
        return ""
    try:
        return _fernet(purpose, key_setting).decrypt(token.encode()).decode()
    except (InvalidToken, ValueError) as exc:
        raise Unreadable() from exc
