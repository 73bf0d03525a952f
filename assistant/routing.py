"""Websocket routes; the widget and operator consumers register here."""

from __future__ import annotations

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
