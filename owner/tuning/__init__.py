"""Owner pages that tune the bot: its voice (/b/<slug>/voice/) and A/B experiments
(/b/<slug>/experiments/). Thin views over assistant/voice and feedback/experiments.py."""
