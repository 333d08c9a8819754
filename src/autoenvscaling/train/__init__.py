"""Training the solver with TRL on a round's environments: the environment over our sandbox, GRPO and SFT."""
