"""One trial with Harbor's semantics: build the task's environment, run an agent (oracle, nop, or a solver) in a
sandbox, run ``tests/test.sh`` and read the reward (``reward.txt`` / ``reward.json``) -> a ``TrialResult`` and a
Harbor trial dir. A task's failure is a reward; an infrastructure failure is a typed error (``errors``)."""
