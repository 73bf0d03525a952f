from __future__ import annotations

from django.urls import path

from owner.tuning import views

app_name = "tuning"

# Mounted at /b/<slug:slug>/ (assistant/urls.py), beside the other owner pages of a bot.
urlpatterns = [
    path("voice/", views.voice_page, name="voice"),
    path("experiments/", views.experiments_page, name="experiments"),
    path("experiments/<int:experiment_id>/", views.experiment_page, name="experiment"),
    path("experiments/<int:experiment_id>/stop/", views.experiment_stop, name="experiment_stop"),
]
