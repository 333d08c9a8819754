"""Trainer hand-off: Harbor dataset dirs, parquet of pool rows, SFT chat JSONL, proposer episodes with rewards."""
