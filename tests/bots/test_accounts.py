"""Signing in at /accounts/login/: where each account lands, and failed logins throttled per
account and per address (django-axes) with a clear message on both login pages."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from bots.services import membership_add

pytestmark = pytest.mark.django_db

LOCKED_RU = "Слишком много неудачных попыток входа. Вход для этой учётной записи и с этого адреса закрыт на 30 мин."
LOCKED_EN = "Too many failed sign-in attempts. Signing in to this account and from this address is locked for 30 min."
LOGIN = "/accounts/login/"


@pytest.fixture(autouse=True)
def fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def operator(bot):
    membership_add(bot=bot, email="operator@shop.example", role="operator", password="pw-operator-1")
    return "operator@shop.example", "pw-operator-1"


def sign_in(client, username, password, *, url=LOGIN, ip="203.0.113.1", **extra):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=ip, **extra)


def test_the_login_page_is_russian_and_looks_like_the_admin(client):
    page = client.get(LOGIN)
    text = page.content.decode()
    assert page.status_code == 200
    assert "admin/css/login.css" in text and "Spravka" in text
    assert "Электронная почта" in text and 'value="Войти"' in text
    # Where each lands, as the next tests show: owners on their dashboard, operators in the inbox.
    assert "владельцы попадают в кабинет владельца (обзор бота или список ботов)" in text
    assert "операторы — во входящие разговоры" in text and "админк" not in text


def test_an_owner_lands_on_their_bots_dashboard_and_may_still_open_the_admin(client, owner, bot):
    response = sign_in(client, owner.username, "pw-owner-1")
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/")["Location"] == "/b/demo/"
    assert client.get("/b/demo/").status_code == 200
    assert client.get(reverse("admin:index")).status_code == 200


def test_an_operator_lands_in_the_inbox_and_not_the_admin(client, operator):
    sign_in(client, *operator)
    assert client.get("/")["Location"] == "/inbox/"
    assert client.get(reverse("admin:index"))["Location"].startswith(reverse("admin:login"))


def test_next_is_followed_after_login(client, owner, bot):
    response = client.post(f"{LOGIN}?next=/bots/demo/try/", {"username": owner.username, "password": "pw-owner-1",
                                                              "next": "/bots/demo/try/"})
    assert response["Location"] == "/bots/demo/try/"


def test_an_account_without_bots_is_offered_to_create_one(client, django_user_model):
    django_user_model.objects.create_user("lost@shop.example", password="pw-lost-123")
    sign_in(client, "lost@shop.example", "pw-lost-123")
    assert client.get("/")["Location"] == "/start/"
    assert "Новый бот для вашего сайта" in client.get("/start/").content.decode()


def test_anonymous_root_goes_to_the_login(client):
    assert client.get("/")["Location"] == f"{LOGIN}?next=/"


def test_an_operator_changes_their_password_and_logs_out(client, operator):
    username, password = operator
    sign_in(client, username, password)
    form = client.get(reverse("password_change"))
    assert form.status_code == 200 and "Смена пароля" in form.content.decode()
    done = client.post(reverse("password_change"), {"old_password": password, "new_password1": "new-secret-77",
                                                    "new_password2": "new-secret-77"}, follow=True)
    assert done.status_code == 200 and "пароль был изменен" in done.content.decode().lower()
    assert client.post(reverse("logout"))["Location"] == reverse("login")
    assert sign_in(client, username, "new-secret-77").status_code == 302


def test_five_wrong_passwords_lock_the_account_even_against_the_right_one(client, owner):
    for _ in range(4):
        assert sign_in(client, owner.username, "wrong").status_code == 200  # the form again, with its error
    locked = sign_in(client, owner.username, "wrong")
    assert locked.status_code == 429 and LOCKED_RU in locked.content.decode()
    right = sign_in(client, owner.username, "pw-owner-1")
    assert right.status_code == 429 and "_auth_user_id" not in client.session


def test_the_account_is_locked_from_every_address_and_in_any_letter_case(client, owner):
    names = ["owner@shop.example", "Owner@Shop.Example", "OWNER@SHOP.EXAMPLE", " owner@shop.example",
             "owner@SHOP.example"]
    for number, name in enumerate(names):
        response = sign_in(client, name, "wrong", ip=f"198.51.100.{number + 1}")
    assert response.status_code == 429
    assert sign_in(client, owner.username, "pw-owner-1", ip="192.0.2.99").status_code == 429


def test_one_address_guessing_many_accounts_is_locked(client, owner):
    for number in range(5):
        response = sign_in(client, f"guess{number}@shop.example", "wrong", ip="203.0.113.66")
    assert response.status_code == 429
    assert sign_in(client, owner.username, "pw-owner-1", ip="203.0.113.66").status_code == 429
    assert sign_in(client, owner.username, "pw-owner-1", ip="203.0.113.67").status_code == 302  # another address


def test_the_admin_login_shows_the_same_lock(client, owner):
    for _ in range(5):
        response = sign_in(client, owner.username, "wrong", url=reverse("admin:login"))
    text = response.content.decode()
    assert response.status_code == 429 and LOCKED_RU in text and 'id="login-form"' in text


def test_the_lock_is_explained_in_english_too(client, owner):
    for _ in range(5):
        response = sign_in(client, owner.username, "wrong", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 429 and LOCKED_EN in response.content.decode()


def test_the_owner_of_the_server_unlocks_an_account_with_a_command(client, owner):
    for _ in range(5):
        sign_in(client, owner.username, "wrong")
    call_command("axes_reset_username", owner.username)
    assert sign_in(client, owner.username, "pw-owner-1").status_code == 302


def test_a_lock_lifts_by_itself_after_the_lockout_time(client, owner):
    for _ in range(5):
        sign_in(client, owner.username, "wrong")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=31))
    assert sign_in(client, owner.username, "pw-owner-1").status_code == 302


def test_a_successful_login_forgets_earlier_failures(client, owner):
    for _ in range(4):
        sign_in(client, owner.username, "wrong")
    assert sign_in(client, owner.username, "pw-owner-1").status_code == 302
    client.logout()
    for _ in range(4):
        assert sign_in(client, owner.username, "wrong").status_code == 200


def test_a_superuser_sees_and_clears_the_locks_in_the_admin(client, owner, django_user_model):
    for _ in range(5):
        sign_in(client, owner.username, "wrong")
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pw-root-1")
    client.force_login(root)
    listing = client.get(reverse("admin:axes_accessattempt_changelist"))
    assert listing.status_code == 200 and "owner@shop.example" in listing.content.decode()
    attempt = AccessAttempt.objects.get()
    client.post(reverse("admin:axes_accessattempt_delete", args=[attempt.pk]), {"post": "yes"})
    client.logout()
    assert sign_in(client, owner.username, "pw-owner-1").status_code == 302


def test_behind_proxies_the_counted_address_is_the_one_the_trusted_proxy_saw(client, owner, settings):
    settings.CHAT_PROXY_HOPS = 1
    for number in range(5):  # a guesser forging the left of X-Forwarded-For gains nothing
        response = sign_in(client, f"guess{number}@shop.example", "wrong", ip="10.0.0.1",
                           HTTP_X_FORWARDED_FOR=f"1.2.3.{number}, 203.0.113.9")
    assert response.status_code == 429
    assert AccessAttempt.objects.filter(ip_address="203.0.113.9").count() == 5
