"""The two roles a model plays: the solver (``solver``, ``solve_run``: attempts on tasks, pass@k) and the proposer
(``proposer/``: staged, agentic workshop or prompt-only generation of new environments, with domain packs), and
the model-tuning policy every caller shares (``tuning``)."""
