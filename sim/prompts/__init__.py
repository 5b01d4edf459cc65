"""Prompt rendering (templates from a materials directory, agent text as data) and the reply schemas."""
from pvsst.sim.prompts.render import estimate_prompt_tokens, post_messages, vote_messages
from pvsst.sim.prompts.templates import post_schema, vote_schema

__all__ = ["estimate_prompt_tokens", "post_messages", "post_schema", "vote_messages", "vote_schema"]
