from tests.review.conftest import ask, knowledge, operator, shop  # noqa: F401
