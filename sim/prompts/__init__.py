"""Prompt templates (versioned text files) and the functions that fill them."""
from sim.prompts.render import estimate_prompt_tokens, post_messages, vote_messages
from sim.prompts.templates import PromptTemplates, post_schema, vote_schema

__all__ = ["PromptTemplates", "estimate_prompt_tokens", "post_messages", "post_schema", "vote_messages",
           "vote_schema"]
