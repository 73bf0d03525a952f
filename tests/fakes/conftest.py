from tests.fakes import fake_amocrm, fake_bitrix24, fake_max, fake_telegram, fake_vk  # noqa: F401
