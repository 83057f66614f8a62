"""Provider-neutral LLM access: the client protocol, an OpenAI-compatible client, a mock, a cache."""
