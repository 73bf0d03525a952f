"""`Authorization: Bearer spr_…`: a per-bot key (bots.apikeys). The key's bot scopes every
query the request makes; there is no other way in."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from bots.apikeys import api_key_authenticate
from bots.models import ApiKey, Bot

MAX_HEADER = 200  # a key is 58 characters; anything far longer is not one


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[AnonymousUser, ApiKey] | None:
        """The key is `request.auth`; `request.user` stays anonymous: no person is signed in (and the
        version history, which records the signed-in person, records the key as the change's reason)."""
        try:
            header = get_authorization_header(request)
        except UnicodeEncodeError as exc:  # a header that is not Latin-1 (a key typed in Cyrillic)
            raise exceptions.AuthenticationFailed(_("Ключ API неверен или отозван.")) from exc
        if not header:
            return None
        if len(header) > MAX_HEADER:
            raise exceptions.AuthenticationFailed(_("Ключ API неверен или отозван."))
        scheme, _sep, value = header.partition(b" ")
        if scheme.lower() != b"bearer" or not value.strip():
            raise exceptions.AuthenticationFailed(
                _("Передайте ключ в заголовке Authorization: Bearer <ключ>.")
            )
        try:
            key = value.strip().decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed(_("Ключ API неверен или отозван.")) from exc
        row = api_key_authenticate(key)
        if row is None:
            raise exceptions.AuthenticationFailed(_("Ключ API неверен или отозван."))
        return AnonymousUser(), row

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="spravka"'


class HasApiKey(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, ApiKey)


def request_bot(request: Request) -> Bot:
    """The bot of the request's key (the permission guarantees there is one)."""
    key = request.auth
    assert isinstance(key, ApiKey)
    return key.bot


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http", "scheme": "bearer", "bearerFormat": "spr_<prefix>_<secret>",
            "description": "Ключ API бота: manage.py apikey SLUG --name NAME или «Ключи API» в админке.",
        }
