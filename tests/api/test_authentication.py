"""API keys: made by the owner (admin or command), shown once, stored hashed, revoked for good."""

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from bots.apikeys import key_digest
from bots.models import ApiKey, Membership
from bots.services import membership_add
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

KEY = re.compile(r"spr_[a-z0-9]{10}_[A-Za-z0-9_-]{43}")


def _apikey(*args):
    out, err = StringIO(), StringIO()
    call_command("apikey", *args, stdout=out, stderr=err)
    return out.getvalue().strip(), err.getvalue()


def test_the_command_prints_a_working_key_that_is_stored_only_as_a_hash(bot):
    key, note = _apikey("demo", "--name", "1С")
    assert KEY.fullmatch(key) and "один раз" in note
    row = ApiKey.objects.get(bot=bot)
    assert row.name == "1С" and row.key_hash == key_digest(key) and key not in str(row.__dict__)
    assert client_for(key).get("/api/v1/entries/").status_code == 200
    listed, _err = _apikey("demo", "--list")
    assert f"spr_{row.prefix}…" in listed and "действует" in listed and key not in listed


def test_a_revoked_key_is_refused_like_a_wrong_one(bot):
    key, _note = _apikey("demo", "--name", "CRM")
    prefix = key.split("_")[1]
    out, _err = _apikey("demo", "--revoke", f"spr_{prefix}")
    assert "отозван" in out
    revoked = client_for(key).get("/api/v1/entries/")
    wrong = client_for(key[:-1] + ("A" if key[-1] != "A" else "B")).get("/api/v1/entries/")
    assert revoked.status_code == wrong.status_code == 401
    assert revoked.json() == wrong.json()
    assert revoked["WWW-Authenticate"] == 'Bearer realm="spravka"'


def test_the_command_refuses_bad_names_unknown_bots_and_other_bots_keys(bot, other_bot, other_key):
    with pytest.raises(CommandError, match="название"):
        _apikey("demo", "--name", "   ")
    with pytest.raises(CommandError, match="не найден"):
        _apikey("nope", "--name", "CRM")
    with pytest.raises(CommandError, match="не найден"):
        _apikey("demo", "--revoke", other_key.split("_")[1])
    assert ApiKey.objects.get(bot=other_bot).revoked_at is None


@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwdw==", "Token abc",
                                    "Bearer spr_short_x", "Bearer " + "x" * 500, "Bearer ключ"])
def test_no_key_or_a_malformed_one_is_a_401_problem(bot, header):
    from rest_framework.test import APIClient

    client = APIClient()
    if header is not None:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get("/api/v1/entries/")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "urn:spravka:problem:unauthorized" and body["detail"]


def test_an_owner_makes_a_key_in_the_admin_and_sees_it_once(client, owner, bot):
    client.force_login(owner)
    response = client.post("/admin/bots/apikey/add/", {"bot": bot.pk, "name": "Склад"})
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    found = KEY.search(response.content.decode())
    assert found is not None
    key = found.group(0)
    assert client_for(key).get("/api/v1/entries/").status_code == 200
    row = ApiKey.objects.get(bot=bot, name="Склад")
    assert row.created_by == owner
    page = client.get(f"/admin/bots/apikey/{row.pk}/change/").content.decode()
    assert key not in page and f"spr_{row.prefix}_" in page
    client.post("/admin/bots/apikey/", {"action": "revoke", "_selected_action": [row.pk]})
    row.refresh_from_db()
    assert row.revoked_at is not None and row.revoked_by == owner
    assert client_for(key).get("/api/v1/entries/").status_code == 401


def test_operators_and_other_owners_cannot_make_or_see_keys(client, bot, other_owner, django_user_model):
    operator = membership_add(bot=bot, email="op@shop.example", role=Membership.Role.OPERATOR,
                              password="pw-operator-1").membership.user
    client.force_login(operator)
    assert client.post("/admin/bots/apikey/add/", {"bot": bot.pk, "name": "x"}).status_code == 302  # to login
    client.force_login(other_owner)
    response = client.post("/admin/bots/apikey/add/", {"bot": bot.pk, "name": "x"})
    assert response.status_code in (200, 403) and not KEY.search(response.content.decode())
    assert not ApiKey.objects.exists()
