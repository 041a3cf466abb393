"""Episode simulation: the episode layer (``episodes``: the one place an episode is assembled and
played), the runner, the scripted policies, the LLM gateway and the model-backed policies."""

from trajforge.simulation.agents import ScriptedAgent
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer, scripted_agent, scripted_user, user_seed
from trajforge.simulation.faults import choose_fault
from trajforge.simulation.runner import AgentReply, EpisodeLimits, UserReply, run_episode
from trajforge.simulation.user import ScriptedUser

__all__ = ["AgentReply", "EpisodeJob", "EpisodeLimits", "EpisodePlayer", "ScriptedAgent", "ScriptedUser",
           "UserReply", "choose_fault", "run_episode", "scripted_agent", "scripted_user", "user_seed"]
