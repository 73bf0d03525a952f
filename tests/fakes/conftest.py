from tests.fakes import fake_telegram, fake_vk  # noqa: F401
