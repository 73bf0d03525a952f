"""The owner dashboard's pages. `/` itself is `views.home` (named "home" in assistant/urls.py)."""

from __future__ import annotations

from django.urls import path

from owner.dashboard import views

app_name = "dashboard"

urlpatterns = [
    path("start/", views.start, name="start"),
    path("b/<slug:slug>/", views.overview, name="overview"),
    path("b/<slug:slug>/setup/", views.setup, name="setup"),
    path("b/<slug:slug>/setup/site/", views.setup_site, name="setup_site"),
    path("b/<slug:slug>/setup/origins/", views.origins, name="origins"),
    path("b/<slug:slug>/runs/<int:run_id>/progress/", views.run_progress, name="run_progress"),
    path("b/<slug:slug>/knowledge/", views.knowledge, name="knowledge"),
    path("b/<slug:slug>/channels/", views.channels, name="channels"),
    path("b/<slug:slug>/channels/telegram/", views.channel_telegram, name="channel_telegram"),
    path("b/<slug:slug>/channels/vk/", views.channel_vk, name="channel_vk"),
    path("b/<slug:slug>/channels/max/", views.channel_max, name="channel_max"),
    path("b/<slug:slug>/channels/<str:kind>/disconnect/", views.channel_disconnect, name="channel_disconnect"),
    path("b/<slug:slug>/crm/", views.crm, name="crm"),
    path("b/<slug:slug>/crm/check/", views.crm_check, name="crm_check"),
    path("b/<slug:slug>/crm/disconnect/", views.crm_disconnect, name="crm_disconnect"),
    path("b/<slug:slug>/crm/deliveries/<int:delivery_id>/retry/", views.crm_retry, name="crm_retry"),
    path("b/<slug:slug>/knowledge/sources/<int:source_id>/crawl/", views.source_recrawl, name="source_crawl"),
    path("b/<slug:slug>/knowledge/documents/", views.document_upload, name="document_upload"),
    path("b/<slug:slug>/knowledge/documents/<int:source_id>/delete/", views.document_remove, name="document_delete"),
    path("b/<slug:slug>/knowledge/qa/", views.qa_add, name="qa_add"),
    path("b/<slug:slug>/knowledge/qa/<int:entry_id>/", views.qa_edit, name="qa_edit"),
]
