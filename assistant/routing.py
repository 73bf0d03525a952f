"""Websocket routes: the widget's (public, checked by key and Origin) and the operators' (a
signed-in session from this server's own pages)."""

from __future__ import annotations

from channels.auth import AuthMiddlewareStack
from django.urls import URLPattern, path

from chat.consumers import ChatConsumer
from inbox.consumers import InboxConsumer

websocket_urlpatterns: list[URLPattern] = [
    # The widget key is public (it is in the site's HTML); the consumer checks it and the Origin.
    path("ws/chat/<str:public_key>/", ChatConsumer.as_asgi()),
    # Session cookie auth: only the operators' socket pays for reading the session.
    path("ws/inbox/", AuthMiddlewareStack(InboxConsumer.as_asgi())),
]
