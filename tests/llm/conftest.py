from typing import Any

import pytest

from tests.fakes import fake_llm  # noqa: F401


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """The shared owner fixtures hash real passwords; a million PBKDF2 rounds per user was most of
    this folder's run time and tests nothing here."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
