"""Evaluation: any policy plays the agent on held-out blueprints; pass@1, pass^k, format validity."""
