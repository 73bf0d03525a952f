from __future__ import annotations

from django.urls import path

from routes import views

app_name = "routes"

urlpatterns = [
    path("reviews/<slug:slug>/", views.review_intake, name="review_intake"),
]
