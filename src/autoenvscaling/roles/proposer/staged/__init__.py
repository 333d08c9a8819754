"""The staged proposer: the harness holds the plan, the model makes one decision or writes one file per call.

See ``episode.run_staged_episode`` for the stages and ``record`` for recorded expectations.
"""
