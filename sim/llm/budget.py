"""A spending cap on model calls, in US dollars and/or tokens.

The gateway charges every provider reply (valid or not) to the budget and refuses to START a new
provider call once the cap is reached; calls already in flight finish, so the spend can exceed the cap
by at most one in-flight batch (``max_concurrency`` requests).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field, ValidationError

from pvsst.core.bounds import MAX_BUDGET_TOKENS
from pvsst.core.errors import InputError
from pvsst.core.validation import StrictModel, describe_validation_error
from pvsst.sim.llm.stops import RunStop


class BudgetExceeded(RunStop):
    """Raised by the gateway when the budget is spent; ``str(err)`` is one line: spent vs cap."""

    exit_code = 3
    status = "budget_exceeded"


class BudgetCap(StrictModel):
    """Spending caps; the run stops cleanly when either is reached (``None``: no cap on that unit). A token
    cap of ``0`` lets no call start; a dollar cap of ``0`` lets only free calls run (local and scripted
    models): it is reached by the first reply that costs anything.

    The one definition of a cap: the study spec's ``budget`` section is this model, and
    :class:`Budget` validates its caps with it.

    Examples
    --------
    >>> BudgetCap(max_usd=2.5).max_tokens is None
    True
    """


    max_usd: Annotated[float, Field(ge=0)] | None = None
    max_tokens: Annotated[int, Field(ge=0, le=MAX_BUDGET_TOKENS)] | None = None


@dataclass
class Budget:
    """The spend against a cap in USD and/or total tokens (prompt + completion); ``None`` means no cap on
    that unit. The caps obey :class:`BudgetCap`.

    Examples
    --------
    >>> budget = Budget(max_tokens=100)
    >>> budget.charge(cost_usd=0.0, tokens=60)
    >>> budget.exhausted
    False
    >>> budget.charge(cost_usd=0.0, tokens=60)
    >>> budget.exhausted, budget.message()
    (True, 'LLM budget exceeded: spent 120 tokens of a 100-token cap')
    >>> free = Budget(max_usd=0.0)
    >>> free.charge(cost_usd=0.0, tokens=60)
    >>> free.exhausted
    False
    """

    max_usd: float | None = None
    max_tokens: int | None = None
    spent_usd: float = 0.0
    spent_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            BudgetCap(max_usd=self.max_usd, max_tokens=self.max_tokens)
        except ValidationError as err:
            raise InputError("budget", *describe_validation_error(err)) from None

    def charge(self, *, cost_usd: float, tokens: int) -> None:
        """Add one reply's cost and tokens to the spend."""
        with self._lock:
            self.spent_usd += float(cost_usd or 0.0)
            self.spent_tokens += int(tokens or 0)

    @property
    def exhausted(self) -> bool:
        """True once either cap is reached (spend >= cap; a $0 cap by a spend above $0): no new call may start."""
        return self._usd_hit or self._tokens_hit

    @property
    def _usd_hit(self) -> bool:
        return self.max_usd is not None and self.spent_usd >= self.max_usd and (self.spent_usd > 0 or self.max_usd > 0)

    @property
    def _tokens_hit(self) -> bool:
        return self.max_tokens is not None and self.spent_tokens >= self.max_tokens

    def message(self) -> str:
        """One line stating spent vs cap for the unit(s) that hit the cap."""
        parts = []
        if self._usd_hit:
            parts.append(f"spent ${self.spent_usd:.6f} of a ${self.max_usd:.6f} cap")
        if self._tokens_hit:
            parts.append(f"spent {self.spent_tokens} tokens of a {self.max_tokens}-token cap")
        if not parts:
            parts.append(f"spent ${self.spent_usd:.6f} and {self.spent_tokens} tokens (under the cap)")
        return "LLM budget exceeded: " + "; ".join(parts)

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` if the cap is reached."""
        if self.exhausted:
            raise BudgetExceeded(self.message())
