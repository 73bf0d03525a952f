"""The local SMTP server the e-mail tests send to is real: Django's SMTP backend reaches it."""

from __future__ import annotations

from django.core.mail import send_mail


def test_django_mail_reaches_the_local_smtp_server(smtp_server):
    send_mail("Проверка", "Текст письма", "noreply@spravka.example", ["owner@shop.example"])
    (message,) = smtp_server.wait_for(1)
    assert message["Subject"] == "Проверка"
    assert message["X-Envelope-To"] == "owner@shop.example"
    assert "Текст письма" in message.get_content()
