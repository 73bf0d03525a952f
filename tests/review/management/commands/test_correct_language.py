"""`manage.py correct` speaks the installation's language (SPRAVKA_LANGUAGE)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import override_settings

from tests.review.conftest import DELIVERY_QUESTION

pytestmark = pytest.mark.django_db


def test_correct_reports_in_english_and_in_russian(shop, knowledge):
    out = StringIO()
    with override_settings(LANGUAGE_CODE="en"):  # what SPRAVKA_LANGUAGE=en sets
        call_command("correct", shop.slug, "--question", DELIVERY_QUESTION, "--answer", "Доставка 350 ₽.", stdout=out)
    first, flagged = out.getvalue().splitlines()
    assert first.startswith("Correction saved: entry #") and first.endswith(", in effect from the next message.")
    assert flagged == f"  to review: entry #{knowledge['delivery'].pk} {knowledge['delivery'].url}"
    out = StringIO()
    call_command("correct", shop.slug, "--question", "Сколько стоит доставка в Казань?", "--answer", "500 ₽.",
                 stdout=out)
    assert out.getvalue().startswith("Поправка сохранена: запись №")
