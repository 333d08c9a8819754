"""Moved to ``autoenvscaling.execution.rundir`` (the run-directory kit); this name stays for code not yet moved."""

from autoenvscaling.execution.rundir import (
    ResultsLog,
    latest_run_dir,
    new_run_id,
    write_resolved_config,
)

__all__ = ["ResultsLog", "latest_run_dir", "new_run_id", "write_resolved_config"]
