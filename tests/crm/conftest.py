"""CRM fixtures: the shop bot (tests/chat/conftest.py) with a privacy policy, so visitors may leave
a contact; connected to the fake amoCRM or Bitrix24 (tests/fakes/); a visitor's conversation with a
few messages, and a way to leave a contact in it as the widget's form does (chat/leads.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from chat import leads, services, writes
from chat.frames import LeadForm
from chat.models import Lead
from crm import services as crm_services
from crm.models import CrmConnection, CrmDelivery
from tests.chat.conftest import shop  # noqa: F401
from tests.fakes import fake_amocrm, fake_bitrix24  # noqa: F401
from tests.fakes.amocrm_api import FakeAmoCRM
from tests.fakes.bitrix24_api import FakeBitrix24

SETTLE = 10.0


@pytest.fixture
def celery_worker_thread(celery_worker_thread: object) -> Iterator[object]:
    """The real worker (tests/conftest.py), stopped once the deliveries the test started are done."""
    yield celery_worker_thread
    deadline = time.monotonic() + SETTLE
    while time.monotonic() < deadline and CrmDelivery.objects.filter(
            status__in=[CrmDelivery.Status.PENDING, CrmDelivery.Status.SENDING]).exists():
        time.sleep(0.05)


@pytest.fixture
def fast_retries(settings: Any) -> None:
    settings.CRM_RETRY_BASE = 0.05
    settings.CRM_TIMEOUT = 10.0  # a loaded machine may be slow to answer; timeouts are not what these tests test
    settings.CRM_MAX_ATTEMPTS = 3


@pytest.fixture
def policy_shop(shop: Any) -> Any:  # noqa: F811
    shop.privacy_policy_url = "https://shop.example/privacy/"
    shop.save(update_fields=["privacy_policy_url"])
    return shop


@pytest.fixture
def amo(policy_shop: Any, fake_amocrm: FakeAmoCRM, fast_retries: None) -> CrmConnection:  # noqa: F811
    return crm_services.amocrm_connect(bot=policy_shop, url=fake_amocrm.url, token=fake_amocrm.token)


@pytest.fixture
def bitrix(policy_shop: Any, fake_bitrix24: FakeBitrix24, fast_retries: None) -> CrmConnection:  # noqa: F811
    return crm_services.bitrix24_connect(bot=policy_shop, url=fake_bitrix24.webhook)


LeaveContact = Callable[..., Lead]


@pytest.fixture
def leave_contact(policy_shop: Any) -> LeaveContact:
    """A visitor asks, an operator answers, and the visitor leaves a contact through the form."""

    def leave(visitor_id: str = "v_crm_1", *, name: str = "Мария", phone: str = "8 (916) 123-45-67",
              email: str = "", question: str = "Доставите диван в Тверь?") -> Lead:
        conversation = services.conversation_open(bot=policy_shop, visitor_id=visitor_id)
        writes.message_store_visitor(conversation, text="Сколько стоит доставка в Тверь?",
                                     client_msg_id=f"{visitor_id}-1", flags={}, intent="question")
        writes.message_store_system(conversation, "Оператор скоро ответит")
        lead, _notes = leads.lead_submit(conversation=conversation, form=LeadForm(
            name=name, phone=phone, email=email, question=question, consent=True))
        return lead

    return leave


@pytest.fixture
def owner_client(client: Any, owner: Any) -> Any:
    client.force_login(owner)
    return client
