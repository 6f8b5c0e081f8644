"""LLM layer: message and stream types, provider protocols, the OpenAI-compatible provider."""
