"""``python -m autoenvscaling.train JOB.json``: see ``train.job``."""

from autoenvscaling.train.job import main

raise SystemExit(main())
