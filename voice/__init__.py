"""The Voice layer (docs/architecture.md): how the bot speaks. Four sliders and the owner's «условия» become
parts of the system prompt; a dictionary rewords what the bot shows; canned replies can be the
owner's own. Below chat: chat imports voice, voice imports only bots and llm."""
