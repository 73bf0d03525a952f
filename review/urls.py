from __future__ import annotations

from django.urls import path

from review import views

app_name = "review"

urlpatterns = [
    path("<str:public_key>/<slug:key>/", views.answer_page, name="answer"),
]
