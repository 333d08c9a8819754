"""The bottom layer of every run: the run-directory kit and one resumable item runner on a pluggable executor.

- ``rundir``: atomic writes (file and directory fsynced), the append-only results log, the run lock, run ids.
- ``runner``: items with a key each; each result is appended to ``results.jsonl`` exactly once by the driver;
  resume skips what is done; progress callbacks.
- ``executors``: where the work runs: local threads (the default) or a Ray cluster (``ray_executor``, the ``ray``
  extra), chosen by ``ExecutorConfig``; ``base`` holds that config and the ``Executor`` protocol they share.
- ``portable``: what lets work run on a node that does not share the driver's disk (inputs shipped as archives,
  outputs carried back for the driver to write).

Nothing here imports the rest of the project (``errors`` aside): solve, validate, propose and the flywheel sit on it.
"""
