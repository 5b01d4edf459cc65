"""Upper bounds of every size-like field of a spec or instrument, checked when it is validated (so at freeze).

A typo such as ``feed_size: 1000000000`` or ``bootstrap_draws: 1000000000000`` would otherwise pass the
freeze and then take the machine's memory or a week of computing; each bound below is far above any
study's need and within what one machine holds, and the one-line error states it (pydantic's ``less
than or equal to N``). The bounds are the same on every machine, so a spec valid here is valid anywhere.

===================================  ==============  ================================================
field                                bound           why
===================================  ==============  ================================================
trial.n_agents, personas.n           1,000,000       10x the engine's 100,000-agent target
trial.n_rounds, memory_rounds        10,000          a post table of agents x rounds rows
trial.feed_size, votes_per_voter     1,000           posts in one prompt (far beyond a context window)
trial.n_distributed_sources          1,000
max_tokens (posts, votes, surveys)   1,000,000       completion tokens of one call
trial.post_char_limit                1,000,000
max_attempts                         100             schema attempts of one call
analysis.bootstrap_draws             1,000,000       and draws x blocks <= 100,000,000 (about 2.4 GB)
analysis.randomization.draws         100,000,000     drawn in batches of 10,000: time, not memory
audit.permutations                   1,000,000
audit.matched_sets                   100,000
seeds                                2**63 - 1       stored as 64-bit integers
execution.workers                    4,096
max_concurrency                      100,000
===================================  ==============  ================================================

Examples
--------
>>> MAX_FEED_SIZE, MAX_BOOTSTRAP_DRAWS
(1000, 1000000)
"""
from __future__ import annotations

MAX_AGENTS = 1_000_000
MAX_PERSONAS = 1_000_000
MAX_ROUNDS = 10_000
MAX_FEED_SIZE = 1_000
MAX_VOTES_PER_VOTER = 1_000
MAX_DISTRIBUTED_SOURCES = 1_000
MAX_TOKENS = 1_000_000
MAX_CHARACTERS = 1_000_000
MAX_ATTEMPTS = 100
MAX_BOOTSTRAP_DRAWS = 1_000_000
MAX_BOOTSTRAP_CELLS = 100_000_000
"""Bootstrap draws x blocks: the (draws x blocks) index and count matrices a bootstrap holds at once."""
MAX_RANDOMIZATION_DRAWS = 100_000_000
MAX_PERMUTATIONS = 1_000_000
MAX_MATCHED_SETS = 100_000
MAX_SEED = 2**63 - 1
MAX_WORKERS = 4_096
MAX_CONCURRENCY = 100_000
MAX_REQUESTS_PER_MINUTE = 10_000_000
MAX_CHUNK = 1_000_000
MAX_BUDGET_TOKENS = 10**15
