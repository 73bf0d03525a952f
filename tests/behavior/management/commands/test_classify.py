"""`manage.py classify`: the rules from the shell, one phrase or a stream of them. No database."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def _run(*args: str, stdin: str | None = None) -> str:
    out = io.StringIO()
    if stdin is None:
        call_command("classify", *args, stdout=out)
    else:
        call_command("classify", *args, stdout=out, stdin=io.StringIO(stdin))
    return out.getvalue()


def test_it_prints_the_intent_of_one_phrase() -> None:
    assert _run("Добрый вечер, есть ли доставка?") == "purchase\n"


def test_a_manager_suit_is_a_product_not_a_call_for_an_operator() -> None:
    assert _run("костюм для менеджера") == "product\n"


def test_stdin_gives_one_intent_and_phrase_per_line_and_skips_empty_lines() -> None:
    output = _run("--stdin", stdin="где мой заказ\n\n   \nсоедините с менеджером\nпривет\n")
    assert output.splitlines() == [
        "order\tгде мой заказ",
        "operator\tсоедините с менеджером",
        "greeting\tпривет",
    ]


def test_empty_stdin_prints_nothing() -> None:
    assert _run("--stdin", stdin="") == ""


def test_without_a_phrase_or_stdin_it_says_what_is_missing() -> None:
    with pytest.raises(CommandError, match="--stdin"):
        call_command("classify")


def test_no_phrase_is_explained_in_the_installation_language():
    from django.test import override_settings

    with pytest.raises(CommandError, match="Нужна реплика или --stdin"):
        _run()
    with override_settings(LANGUAGE_CODE="en"), pytest.raises(CommandError, match="Give a phrase or --stdin"):
        _run()
