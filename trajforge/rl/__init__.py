"""RL on environment rewards: the current policy plays whole episodes (scripted user, real tools),
the verifiers score them, and a group-relative policy gradient trains the policy's own tokens.

- ``rollout``: episodes played token-in, token-out, so the trained sequence is exactly what the
  model sampled (``Rollout.completion_ids`` with ``env_mask`` marking the policy's tokens);
- ``reward``: the reward of an episode (pass, plus a progress term);
- ``train``: ``trajforge train rl`` (TRL's ``GRPOTrainer`` with a multi-turn ``rollout_func``).

Nothing heavy is imported here.
"""
