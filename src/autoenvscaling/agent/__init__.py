"""The terminal agent: the loop, its action formats, and ATIF trajectories (``trajectory``)."""

from autoenvscaling.agent.actions import Action, get_action_format
from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.agent.loop import Agent, AgentResult
from autoenvscaling.agent.trajectory import Trajectory, TrajectoryRecorder, read_trajectory

__all__ = [
    "Action",
    "Agent",
    "AgentConfig",
    "AgentResult",
    "Trajectory",
    "TrajectoryRecorder",
    "get_action_format",
    "read_trajectory",
]
