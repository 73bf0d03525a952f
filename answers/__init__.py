"""The answer chain: one function from a visitor's turn to a checked reply (rules result, search, model,
source and fact checks, retrieval-only excerpts, product cards, order lookups) and the texts a visitor reads."""
