"""Sandboxes: the contract (``base``), the Docker backend, the in-memory fake, the janitor."""
