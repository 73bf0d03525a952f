"""/api/schema/ for programs and for people. Programs get what they ask for, as before: YAML
(`application/vnd.oai.openapi`, also for `*/*`), or JSON with `Accept: application/json`. A browser
asks for `text/html` first, which no schema renderer speaks, so content negotiation used to fall
through to `*/*` and hand it the YAML as `application/vnd.oai.openapi`: a download. It gets the same
YAML as `text/plain` instead, shown in the tab."""

from __future__ import annotations

from collections.abc import Iterable

from drf_spectacular.renderers import OpenApiYamlRenderer
from drf_spectacular.views import SpectacularAPIView
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request


class YamlAsText(OpenApiYamlRenderer):
    media_type = "text/plain"
    charset = "utf-8"


class BrowserReadsText(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        accept = request.META.get("HTTP_ACCEPT", "")
        chosen_format = format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE or "format")
        if "text/html" in accept and not chosen_format:
            for renderer in renderers:
                if isinstance(renderer, YamlAsText):
                    return renderer, renderer.media_type
        return super().select_renderer(request, renderers, format_suffix)


class SchemaView(SpectacularAPIView):
    renderer_classes = [*SpectacularAPIView.renderer_classes, YamlAsText]  # last: never chosen for */*
    content_negotiation_class = BrowserReadsText
