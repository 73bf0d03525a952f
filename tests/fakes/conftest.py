from tests.fakes import fake_max, fake_telegram, fake_vk  # noqa: F401
