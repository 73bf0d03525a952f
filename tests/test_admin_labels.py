"""The admin speaks the account's language: human labels for every field and choice, never raw values.

Every changelist and change form of the admin (the rows of tests/test_admin_walk.py, one per
model and tenant), in English and in Russian, as a superuser:

- list headers, filter titles and form labels are in the page's language: no Cyrillic in English,
  and in Russian no label Django made up from a field's name (`Bot`, `Kind`, `Site url`);
- no cell and no filter choice shows a choice's raw value (`chunk`, `qa`, `waiting`) where the
  choice has a label, nor Python's `True`, `False` or `None` (booleans are icons);
- the filter choices of a field with choices are its labels in the page's language.
"""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.admin.templatetags.admin_list import items_for_result, result_headers
from django.contrib.auth import get_user_model
from django.db import models
from django.urls import reverse
from django.utils.html import strip_tags
from django.utils.text import capfirst

from tests.test_admin_walk import ROWS, world  # noqa: F401  (the fixture: two tenants, a row of every model)

pytestmark = pytest.mark.django_db

CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)
# Words that are the same in Russian and English (names of formats, protocols and products).
SAME_IN_BOTH = {word.lower() for word in (
    "ID", "IP", "URL", "E-mail", "API", "JSON", "CSV", "HTTP", "YML", "Webhook", "sitemap.xml", "OpenAI", "Anthropic",
    "HMAC", "SLA", "Spravka", "ETag", "CRM")}
RAW = {"True", "False", "None"}


def made_up(model: type[models.Model]) -> set[str]:
    """The labels Django invents for fields without a verbose_name: `site_url` -> `Site url`."""
    names = set()
    for field in model._meta.get_fields():
        name = getattr(field, "name", "")
        names.add(capfirst(name.replace("_", " ")))
        names.add(name)
    return names


def raw_choices(model: type[models.Model]) -> set[str]:
    """The raw values of the model's choices whose label differs from the value."""
    values = set()
    for field in model._meta.get_fields():
        for value, label in getattr(field, "flatchoices", None) or []:
            if value not in (None, "") and str(value) != str(label):
                values.add(str(value))
    return values


def label_problems(text: object, lang: str, model: type[models.Model]) -> str | None:
    text = strip_tags(str(text or "")).strip()
    if not text or text.lower() in SAME_IN_BOTH:
        return None
    if lang == "en" and CYRILLIC.search(text):
        return "Russian in English"
    if lang == "ru" and not CYRILLIC.search(text):
        return "made up from the field's name" if text in made_up(model) else "not Russian"
    return None


@pytest.fixture
def superuser(world):  # noqa: F811
    user = get_user_model().objects.create_superuser("root@walk.example", "root@walk.example", "pw-walk-12345")
    return user


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_changelists_show_labels_in_the_pages_language(client, world, superuser, lang):  # noqa: F811
    client.force_login(superuser)
    problems: list[str] = []
    walked = 0
    for model in ROWS:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        response = client.get(url, HTTP_ACCEPT_LANGUAGE=lang)
        assert response.status_code == 200, url
        assert response.headers.get("Content-Language") == lang, url
        if "cl" not in (response.context or {}):
            continue  # a page of its own in place of the list (the review queue)
        cl = response.context["cl"]
        walked += 1
        raw = raw_choices(model)
        for header in result_headers(cl):
            why = label_problems(header["text"], lang, model)
            if why:
                problems.append(f"{url} header {header['text']!r}: {why}")
        for spec in cl.filter_specs:
            why = label_problems(spec.title, lang, model)
            if why:
                problems.append(f"{url} filter {spec.title!r}: {why}")
            for choice in spec.choices(cl):
                shown = str(choice.get("display"))
                if shown in raw or shown in RAW:
                    problems.append(f"{url} filter {spec.title!r} offers the raw value {shown!r}")
                if lang == "en" and isinstance(spec, admin.ChoicesFieldListFilter) and CYRILLIC.search(shown):
                    problems.append(f"{url} filter {spec.title!r} offers {shown!r} in Russian")
        assert cl.result_list, f"{url}: no rows to look at"
        for row in cl.result_list:
            for cell in items_for_result(cl, row, None):
                shown = strip_tags(str(cell)).strip()
                if shown in raw or shown in RAW:
                    problems.append(f"{url} shows the raw value {shown!r}")
    assert walked >= 20
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_change_forms_label_every_field_in_the_pages_language(client, world, superuser, lang):  # noqa: F811
    _bots, rows, _users = world
    client.force_login(superuser)
    problems: list[str] = []
    for model in ROWS:
        row = rows[model]["a"]
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[row.pk])
        response = client.get(url, HTTP_ACCEPT_LANGUAGE=lang)
        assert response.status_code == 200, url
        adminform = response.context.get("adminform")
        if adminform is None:
            continue
        for fieldset in adminform:
            if fieldset.name:
                why = label_problems(fieldset.name, lang, model)
                if why:
                    problems.append(f"{url} fieldset {fieldset.name!r}: {why}")
            for line in fieldset:
                for field in line:
                    label = field.field["label"] if field.is_readonly else field.field.label
                    why = label_problems(label, lang, model)
                    if why:
                        problems.append(f"{url} field {label!r}: {why}")
                    if field.is_readonly and strip_tags(str(field.contents())).strip() in RAW | raw_choices(model):
                        problems.append(f"{url} field {label!r} shows the raw value {field.contents()!r}")
                    if not field.is_readonly and lang == "en" and getattr(field.field.field, "choices", None):
                        for _value, text in field.field.field.choices:
                            if isinstance(text, str) and CYRILLIC.search(text) and not isinstance(
                                    field.field.field, type(None)) and _value and not _is_row(_value):
                                problems.append(f"{url} field {label!r} offers {text!r} in Russian")
    assert not problems, "\n".join(problems)


def _is_row(value: object) -> bool:
    """A choice of a relation (a row, named by the user's data) rather than a fixed choice."""
    return hasattr(value, "instance") or str(value).isdigit()
