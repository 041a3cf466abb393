"""The boundary-resynthesis loop: rollout, reward, detect, resynthesize, train (issue 8).

Submodules are imported where used; this package imports nothing heavy."""
