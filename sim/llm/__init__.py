"""The LLM layer: gateway, cache, budget, structured output and providers, all over litellm.

Every module here may import litellm, whose import otherwise fetches its model cost map from GitHub
(~10 s of retries offline, and no network at all in CI); the packaged copy is used instead unless the
user has set ``LITELLM_LOCAL_MODEL_COST_MAP`` themselves.
"""
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
