"""The two roles a model plays: the solver (``solver``, ``solve_run``: attempts on tasks, pass@k) and the proposer
(``proposer/``: staged, agentic workshop or prompt-only generation of new environments, with domain packs), and
the model-tuning policy every caller shares (``tuning``), and how every caller builds the agents of its attempts
(``solver_factory``: oracle, nop, or a solver whose model is opened here or, on Ray, on each worker)."""
