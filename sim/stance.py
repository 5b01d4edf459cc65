"""The 7-level stance scale (+3 strongly support ... -3 strongly oppose) and balanced initial stances.

Examples
--------
>>> STANCE_LABELS[3], LABEL_TO_STANCE["lean oppose"]
('strongly support', -1)
>>> import numpy as np
>>> sorted(balanced_initial_stances(12, np.random.default_rng(0)))
[-3, -3, -2, -2, -1, -1, 1, 1, 2, 2, 3, 3]
>>> sorted(reference_initial_stances(6, 101))
[-3, -2, -1, 1, 2, 3]
"""
from __future__ import annotations

import random

import numpy as np

from pvsst.core.errors import InputError

STANCE_LABELS: dict[int, str] = {
    3: "strongly support",
    2: "support",
    1: "lean support",
    0: "neutral",
    -1: "lean oppose",
    -2: "oppose",
    -3: "strongly oppose",
}
LABEL_TO_STANCE: dict[str, int] = {label: score for score, label in STANCE_LABELS.items()}
# Labels in scale order, as offered to the model (the reply schema's enum).
OPINION_CHOICES: tuple[str, ...] = tuple(STANCE_LABELS[s] for s in range(3, -4, -1))
PUSH_SIGN = {"support": 1, "oppose": -1}

# Fill order for populations not divisible by 6: alternate sides so the two sides never differ by more
# than one agent and the mean initial stance is as close to 0 as the size allows.
_FILL_ORDER = (3, -3, 2, -2, 1, -1)


def balanced_initial_stances(n: int, rng: np.random.Generator) -> list[int]:
    """Initial stances spread evenly over the six non-neutral levels, shuffled by ``rng``.

    With ``n`` divisible by 6 every level holds exactly ``n / 6`` agents (PV-SST's design); otherwise the
    remainder is filled in the order +3, -3, +2, -2, +1, -1.
    """
    levels = [_FILL_ORDER[i % 6] for i in range(n)]
    order = rng.permutation(n)
    return [int(levels[i]) for i in order]


# The reference implementation's layout before its shuffle: the six non-neutral levels, strongest
# support first, each repeated n / 6 times.
REFERENCE_LEVEL_ORDER = (3, 2, 1, -1, -2, -3)
REFERENCE_STANCE_SEED_OFFSET = 1701


def reference_initial_stances(n: int, seed: int) -> list[int]:
    """PV-SST's reference assignment: the levels +3, +2, +1, -1, -2, -3, each ``n / 6`` times in that
    order, shuffled by ``random.Random(seed + 1701).shuffle``; agent ``i`` (id order) takes item ``i``.

    Needs ``n`` divisible by 6, as the reference does.
    """
    if n % 6:
        raise InputError("trial", "n_agents", f"the reference stance assignment needs a multiple of 6 agents, got {n}")
    levels = [level for level in REFERENCE_LEVEL_ORDER for _ in range(n // 6)]
    random.Random(int(seed) + REFERENCE_STANCE_SEED_OFFSET).shuffle(levels)
    return levels


def push_sign(direction: str) -> int:
    """+1 for a push toward ``support``, -1 toward ``oppose``."""
    return PUSH_SIGN[direction]


def extreme_stance(direction: str) -> int:
    """The adversaries' fixed stance: +3 when pushing support, -3 when pushing oppose."""
    return 3 * push_sign(direction)
