"""trajforge: verified, diverse, multi-turn agent trajectories from executable environments."""

__version__ = "0.1.0"
