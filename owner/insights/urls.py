"""Owner pages of the insights app, under /b/<slug>/ (assistant/urls.py)."""

from __future__ import annotations

from django.urls import path

from owner.insights.views import members, testing, usage

app_name = "insights"

urlpatterns = [
    path("<slug:slug>/testing/", testing.testing_page, name="testing"),
    path("<slug:slug>/testing/sets/new/", testing.set_edit_page, name="set_new"),
    path("<slug:slug>/testing/sets/<int:set_id>/", testing.set_page, name="set"),
    path("<slug:slug>/testing/sets/<int:set_id>/edit/", testing.set_edit_page, name="set_edit"),
    path("<slug:slug>/testing/runs/<int:run_id>/", testing.run_page, name="run"),
    path("<slug:slug>/testing/runs/<int:run_id>/progress/", testing.run_progress, name="run_progress"),
    path("<slug:slug>/usage/", usage.usage_page, name="usage"),
    path("<slug:slug>/members/", members.members_page, name="members"),
]
