from tests.fakes import fake_llm  # noqa: F401
