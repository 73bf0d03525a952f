from tests.fakes import fake_telegram  # noqa: F401
