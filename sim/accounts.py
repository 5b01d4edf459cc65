"""Account ids and viewer ordinals: the two id schemes a protocol can use.

``materials`` (pvsst's own materials): honest agents ``a00``, ``a01``, ... (at least two digits), adversaries ``x00``,
``x01``, ...
``reference`` (PV-SST's implementation): honest agents ``a00``, ... (two digits), the single source
``c2000`` and the distributed sources ``c3000``, ``c3001``, ... Both sort in creation order, which is
the order the adversary-slot rotation uses.

Examples
--------
>>> honest_ids(3, "reference"), adversary_ids("distributed_sources", 4, "reference")
(['a00', 'a01', 'a02'], ['c3000', 'c3001', 'c3002', 'c3003'])
>>> adversary_ids("single_source", 1, "reference"), adversary_ids("single_source", 1, "materials")
(['c2000'], ['x00'])
>>> viewer_ordinal("a07", 7, "from_id"), viewer_ordinal("a07", 3, "ordinal")
(7, 3)
"""
from __future__ import annotations

from pvsst.core.errors import InputError

# The reference implementation numbers each adversarial arm's accounts from its own start.
REFERENCE_ADVERSARY_START = {"single_source": 2000, "distributed_sources": 3000}
REFERENCE_ADVERSARY_START_OTHER = 4000


def honest_ids(n: int, scheme: str = "materials") -> list[str]:
    """Ids of ``n`` honest agents: ``a`` and the ordinal, zero-padded to at least two digits (exactly two
    in the reference scheme, as its ``f"a{i:02d}"``)."""
    width = max(2, len(str(n - 1))) if scheme == "materials" else 2
    return [f"a{i:0{width}d}" for i in range(n)]


def adversary_ids(condition: str, n: int, scheme: str = "materials") -> list[str]:
    """Ids of the ``n`` adversary accounts of ``condition``."""
    if scheme == "materials":
        return [f"x{j:02d}" for j in range(n)]
    if scheme == "reference":
        start = REFERENCE_ADVERSARY_START.get(condition, REFERENCE_ADVERSARY_START_OTHER)
        return [f"c{start + j:04d}" for j in range(n)]
    raise InputError("protocol", "account_ids", f"unknown id scheme {scheme!r} (materials, reference)")


def viewer_ordinal(agent_id: str, ordinal: int, mode: str = "ordinal") -> int:
    """The viewer number of the adversary-slot rotation: the account ordinal, or the id's digits."""
    if mode == "ordinal":
        return int(ordinal)
    if mode == "from_id":
        try:
            return int(agent_id[1:])
        except ValueError:
            raise InputError("protocol", "viewer_ordinal", f"account id {agent_id!r} has no number after "
                             "its first letter") from None
    raise InputError("protocol", "viewer_ordinal", f"unknown mode {mode!r} (ordinal, from_id)")
