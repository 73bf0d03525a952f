"""`/accounts/invite/<link>/`: the page an invited person opens from the e-mail. A new account sets
its password here; an existing one signs in first. The rules live in bots.members."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bots.members import MembersError, account_exists, invitation_accept, invitation_from_link


class NewPasswordForm(forms.Form):
    password1 = forms.CharField(label=gettext_lazy("Пароль"), widget=forms.PasswordInput, strip=False,
                                max_length=128)
    password2 = forms.CharField(label=gettext_lazy("Пароль ещё раз"), widget=forms.PasswordInput, strip=False,
                                max_length=128)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("password1") and data.get("password1") != data.get("password2"):
            raise forms.ValidationError(_("Пароли не совпадают."))
        return data


def accept(request: HttpRequest, token: str) -> HttpResponse:
    context: dict[str, Any] = {**admin.site.each_context(request), "title": _("Приглашение")}
    try:
        invitation = invitation_from_link(token)
    except MembersError as exc:
        return render(request, "registration/invite.html", {**context, "problem": exc.message}, status=410)
    signed_in = request.user.is_authenticated
    needs_login = not signed_in and account_exists(invitation.email)
    form = NewPasswordForm(request.POST or None) if not signed_in and not needs_login else None
    context |= {"invitation": invitation, "form": form, "needs_login": needs_login,
                "login_url": f"{reverse('login')}?{urlencode({'next': request.path})}"}
    if request.method == "POST" and not needs_login and (form is None or form.is_valid()):
        password = form.cleaned_data["password1"] if form is not None else ""
        try:
            membership = invitation_accept(invitation=invitation, user=request.user, password=password)
        except MembersError as exc:
            return render(request, "registration/invite.html", {**context, "problem": exc.message}, status=400)
        if not signed_in:
            login(request, membership.user, backend="django.contrib.auth.backends.ModelBackend")
        return HttpResponseRedirect(reverse("home"))
    return render(request, "registration/invite.html", context, status=400 if request.method == "POST" else 200)
