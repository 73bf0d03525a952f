from tests.fakes import fake_llm  # noqa: F401
from tests.review.conftest import ask, knowledge, operator, shop  # noqa: F401
