"""A tiny command-line to-do list stored as JSON."""
