"""`manage.py addmember SLUG EMAIL --role owner|operator [--password P]`."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from bots.models import Membership

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def addmember(*args: str) -> str:
    out = StringIO()
    call_command("addmember", *args, stdout=out)
    return out.getvalue()


def test_a_new_operator_gets_an_account_with_a_generated_password_and_no_admin(bot):
    out = addmember("demo", "anna@shop.example", "--role", "operator")

    user = get_user_model().objects.get(username="anna@shop.example")
    password = re.search(r"пароль: (\S+)", out)
    assert password and user.check_password(password.group(1))
    assert "оператор бота «demo»" in out and "/inbox/" in out
    assert not user.is_staff and user.email == "anna@shop.example"
    assert Membership.objects.get(bot=bot, user=user).role == "operator"


def test_a_new_owner_with_a_given_password_is_admin_staff(bot):
    out = addmember("demo", "boss@shop.example", "--role", "owner", "--password", "long-secret-42")

    user = get_user_model().objects.get(username="boss@shop.example")
    assert user.check_password("long-secret-42") and user.is_staff
    assert "пароль задан в --password" in out and "long-secret-42" not in out
    assert "входит на /accounts/login/ и попадает в кабинет владельца" in out  # as the login page says


def test_an_existing_membership_changes_its_role_and_staff_follows(bot, owner):
    out = addmember("demo", owner.username, "--role", "operator")

    owner.refresh_from_db()
    assert Membership.objects.get(bot=bot, user=owner).role == "operator"
    assert not owner.is_staff
    assert "теперь оператор (была роль: владелец)" in out

    out = addmember("demo", owner.username.upper(), "--role", "OWNER")  # e-mail and role in any case
    owner.refresh_from_db()
    assert owner.is_staff and Membership.objects.filter(user=owner).count() == 1
    assert get_user_model().objects.count() == 1


def test_the_same_role_again_changes_nothing_and_says_so(bot, owner):
    out = addmember("demo", owner.username, "--role", "owner", "--password", "other-password-9")
    owner.refresh_from_db()
    assert "уже владелец" in out and "пароль не изменён" in out
    assert owner.check_password("pw-owner-1")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "a@shop.example", "--role", "owner"], "Бот «nope» не найден"),
        (["demo", "not-an-email", "--role", "owner"], "Введите правильный адрес электронной почты"),
        (["demo", "a@shop.example", "--role", "admin"], "Неизвестная роль «admin»: owner (владелец) или operator"),
        (["demo", "a@shop.example", "--role", "owner", "--password", "123"], "Введённый пароль слишком короткий"),
    ],
)
def test_bad_input_is_a_clear_error_and_nothing_is_created(bot, args, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        addmember(*args)
    assert not get_user_model().objects.filter(username="a@shop.example").exists()
    assert Membership.objects.count() == 1  # the fixture owner's


def test_the_role_is_required():
    with pytest.raises(CommandError, match="--role"):
        addmember("demo", "a@shop.example")
