"""Context management: the conversation, strategies that summarize it, the manager."""
