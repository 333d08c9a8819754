"""AutoEnvScaling: agents that build, validate and calibrate RL environments for terminal agents."""

__version__ = "0.1.0"
