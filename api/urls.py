"""/api/v1/… resources, /api/schema/ (OpenAPI 3), /api/docs/ (Swagger UI from our own static files).
Paths and field names are a contract: integrations rely on them."""

from __future__ import annotations

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularSwaggerView
from rest_framework.permissions import AllowAny
from rest_framework.routers import SimpleRouter

from api.problems import not_found
from api.schema import SchemaView
from api.views.chat import ConversationViewSet, GapViewSet, LeadViewSet, ReviewItemViewSet
from api.views.entries import EntryViewSet
from api.views.knowledge import AskViewSet, DocumentViewSet, SearchViewSet, SourceViewSet

router = SimpleRouter(trailing_slash="/?")  # type: ignore[arg-type]  # a pattern: "/" optional
router.register("entries", EntryViewSet, basename="entry")
router.register("sources", SourceViewSet, basename="source")
router.register("documents", DocumentViewSet, basename="document")
router.register("search", SearchViewSet, basename="search")
router.register("ask", AskViewSet, basename="ask")
router.register("conversations", ConversationViewSet, basename="conversation")
router.register("leads", LeadViewSet, basename="lead")
router.register("gaps", GapViewSet, basename="gap")
router.register("review-items", ReviewItemViewSet, basename="review-item")

public = {"authentication_classes": [], "permission_classes": [AllowAny], "throttle_classes": []}

urlpatterns = [
    path("v1/", include(router.urls)),
    path("schema/", SchemaView.as_view(**public), name="api-schema"),  # a browser reads it as text (api/schema.py)
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema", **public), name="api-docs"),
    re_path(r"^.*$", not_found),
]
