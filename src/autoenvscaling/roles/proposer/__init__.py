"""The proposer role: build new environments from solver trajectories, agentically (a workshop sandbox with
``check``/``try``) or in one model call (the prompt-only baseline); domain packs say what a domain looks like."""
