"""Signing in: Django's auth views on /accounts/ with pages that look like the admin, the landing
after login, and what a throttled login (django-axes) shows.

Where a person lands after login (`/`) is the owner dashboard's (owner/dashboard/views/home.py).
Failed logins are counted per account and per client address; the lockout page is the login form
again, with the reason, on the page the person was using (this one or the admin's), status 429.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path, reverse, reverse_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bots import invites


def _site(request: HttpRequest) -> dict[str, Any]:
    """The admin's header, title and user links, so these pages look like the rest of the admin."""
    return admin.site.each_context(request)


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True
    extra_context = {"title": gettext_lazy("Вход")}

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**_site(self.request), **super().get_context_data(**kwargs)}


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "registration/password_change.html"
    success_url = reverse_lazy("password_change_done")
    extra_context = {"title": gettext_lazy("Смена пароля")}

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**_site(self.request), **super().get_context_data(**kwargs)}


class PasswordChangeDoneView(auth_views.PasswordChangeDoneView):
    template_name = "registration/password_changed.html"  # the admin's own is password_change_done.html

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**_site(self.request), **super().get_context_data(**kwargs), "home_url": reverse("home")}


def lockout_message() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return _(
        "Слишком много неудачных попыток входа. Вход для этой учётной записи и с этого адреса закрыт "
        "на %(minutes)d мин. Подождите или попросите администратора снять блокировку."
    ) % {"minutes": minutes}


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: Any = None
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the login form of the page in use, with the reason, status 429."""
    on_admin = request.path == reverse("admin:login")
    form_class = AdminAuthenticationForm if on_admin else AuthenticationForm
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    context = {
        **_site(request),
        "form": form_class(request, initial={"username": request.POST.get("username", "")}),
        "locked_out": lockout_message(),
        "app_path": request.get_full_path(),
        "next": next_url,
        "title": _("Вход"),
    }
    template = "admin/login.html" if on_admin else "registration/login.html"
    return render(request, template, context, status=429)


def client_ip(request: HttpRequest) -> str | None:
    """AXES_CLIENT_IP_CALLABLE: the address failures are counted for. Behind CHAT_PROXY_HOPS
    trusted proxies (the widget's setting), read from the right of X-Forwarded-For, as the widget
    does; the left part of that header is whatever the client wrote."""
    hops = settings.CHAT_PROXY_HOPS
    if hops > 0:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= hops and _valid_ip(forwarded[-hops]):
            return forwarded[-hops]
    return _valid_ip(request.META.get("REMOTE_ADDR", ""))


def login_username(request: HttpRequest, credentials: dict[str, Any] | None = None) -> str:
    """AXES_USERNAME_CALLABLE: logins are e-mails; «Owner@Shop.example» and «owner@shop.example»
    are one account to the counter, or changing case would buy a guesser fresh attempts."""
    raw = (credentials or {}).get("username") or request.POST.get("username", "")
    return str(raw).strip().lower()


def _valid_ip(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None


urlpatterns = [
    path("login/", LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password_change/", PasswordChangeView.as_view(), name="password_change"),
    path("password_change/done/", PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("invite/<str:token>/", invites.accept, name="invite_accept"),
]
