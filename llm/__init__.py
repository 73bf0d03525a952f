"""Language models behind one small interface: providers (Anthropic SDK, OpenAI-compatible, none),
structured output with one form repair, the run journal and usage lines.

Nothing here decides what a visitor sees; the answer chain does, with this app's results as input.
"""
