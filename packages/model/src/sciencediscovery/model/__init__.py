"""Provider-neutral model client, OpenAI-compatible and Anthropic providers, scripted provider, retries, overflow normalization."""
