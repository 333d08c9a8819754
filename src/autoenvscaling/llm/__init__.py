"""Model access: the contract (``base``), OpenAI-compatible client, embedded server, scripted fake."""
