from __future__ import annotations

from django.urls import path

from inbox import views

app_name = "inbox"

urlpatterns = [
    path("", views.inbox, name="index"),
    path("c/<int:conversation_id>/", views.conversation, name="conversation"),
    path("leads/", views.leads_page, name="leads"),
    path("leads.csv", views.leads_csv, name="leads_csv"),
    path("sw.js", views.service_worker, name="service_worker"),
    path("push/subscribe/", views.push_subscribe, name="push_subscribe"),
    path("push/unsubscribe/", views.push_unsubscribe, name="push_unsubscribe"),
]
