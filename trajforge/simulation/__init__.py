"""Episode simulation: the runner, scripted policies and (later) the LLM gateway."""

from trajforge.simulation.agents import ScriptedAgent, choose_fault
from trajforge.simulation.runner import AgentReply, EpisodeLimits, UserReply, run_episode
from trajforge.simulation.user import ScriptedUser

__all__ = ["AgentReply", "EpisodeLimits", "ScriptedAgent", "ScriptedUser", "UserReply",
           "choose_fault", "run_episode"]
