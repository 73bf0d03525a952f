from __future__ import annotations

from django.urls import path

from inbox import views

app_name = "inbox"

urlpatterns = [
    path("", views.inbox, name="index"),
    path("c/<int:conversation_id>/", views.conversation, name="conversation"),
    path("leads/", views.leads_page, name="leads"),
    path("leads.csv", views.leads_csv, name="leads_csv"),
]
