"""The parameters of a thread study: every setting of SynthPAI's thread procedure, with its default.

The procedure is SynthPAI's (Yukhymenko et al. 2024, "A Synthetic Dataset for Personal Attribute
Inference"; repository eth-sri/SynthPAI, ``configs/thread/thread.yaml`` and ``src/thread/run_thread.py``).
Each field's default is the original's value; the original's name is in the field table of
docs/threads.md. A study spec's thread section is this model, so a bound or a default is written once.

Comment probability in round ``n`` (from 0) is ``max(comment_probability - comment_probability_decay * n,
comment_probability_floor)``: with the defaults 0.7, 0.6, 0.5, ... 0.1 and 0.1 from then on, which is the
original's weight ``7 - n`` against ``3 + n`` (and 1 against 9 from round 7).

``caps: enforce`` (the default) keeps every thread within ``max_depth`` and ``max_children``;
``caps: original`` reproduces the original's fallback, which *breaks both invariants*: whenever fewer than
``top_candidates`` nodes pass the caps, the original ignores them and draws from every node the persona
has not written and not yet replied to (:mod:`pvsst.sim.threads.parent_choice`).

Examples
--------
>>> s = ThreadSettings()
>>> s.engaged_profiles, s.n_rounds, s.max_actions, s.max_depth, s.max_children, s.top_candidates
(40, 2, 3, 5, 3, 10)
>>> [round(s.comment_probability_in(n), 12) for n in range(8)]
[0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.1]
>>> thread_settings({"max_depth": 0})
Traceback (most recent call last):
...
pvsst.core.errors.InputError: threads: max_depth: Input should be greater than or equal to 1 (got 0)
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from pvsst.core.errors import InputError
from pvsst.core.validation import Share, SpecFieldError, StrictModel, describe_validation_error

_Count = Annotated[int, Field(ge=1)]


class WordRange(StrictModel):
    """The length a comment is asked for, in words (``min`` to ``max``, both included)."""

    min: _Count
    max: _Count

    @model_validator(mode="after")
    def _ordered(self) -> WordRange:
        if self.min > self.max:
            raise SpecFieldError("min", f"must not exceed max ({self.max}), got {self.min}")
        return self


class ThreadSettings(StrictModel):
    """Every parameter of the thread procedure (defaults: SynthPAI's; see the module docstring).

    Attributes
    ----------
    n_threads : threads of the study; each has its own author (no persona authors two threads).
    engaged_profiles : personas engaged in each thread (SynthPAI ``no_profiles``).
    n_rounds : rounds of each thread (``no_rounds``).
    max_actions : a persona draws 1 to this many actions a round (``no_actions``).
    comment_probability, comment_probability_decay, comment_probability_floor : an action is a comment
        with probability ``max(p0 - decay * round, floor)``, else it abstains.
    p_critic : critics per round are ``int(engaged_profiles * p_critic)`` draws with replacement from the
        engaged personas, redrawn every round (``p_critic``).
    p_short : a comment is short with this probability, else long (``p_short``).
    short_words, long_words : the word ranges asked for (``min_comment_len``/``max_comment_len``; the
        original fixes the long range at 10-50 in code).
    max_depth : no reply deeper than this (the post is depth 0; ``max_depth``).
    max_children : no comment gets more replies than this (``no_max_comments``).
    max_root_replies : a cap on direct replies to the post; ``None`` leaves them uncapped (the original's
        code says the post's replies are not to be limited, and its fallback leaves them so).
    top_candidates : the parent is drawn among this many best-scored candidates (``no_sampled_comments``).
    root_candidate_rounds : rounds in which the post itself can be replied to (the original: 1, the post
        leaves the candidates after round 0).
    parent_choice : ``top``: top-k by score, softmax over the raw scores (the original's ``mode: top``).
    caps : ``enforce`` or ``original`` (the original's fallback; breaks the depth and children caps).
    comment_votes : engaged personas vote on the round's comments; the net votes then rank the candidates
        before the top-k cut (off by default; the original has no votes).
    votes_per_voter : comments each persona votes on per round, when ``comment_votes`` is on.
    temperature, max_tokens : sampling of comment calls; ``post_max_tokens`` of the opening post's call;
    vote_temperature, vote_max_tokens : of vote calls.
    render : how another persona's text enters a prompt: ``data`` (one line, quotes escaped, pvsst's
        default) or ``verbatim`` (as written, as the original does; :mod:`pvsst.sim.prompts.agent_text`).
    """

    n_threads: _Count = 1
    engaged_profiles: _Count = 40
    n_rounds: _Count = 2
    max_actions: _Count = 3
    comment_probability: Share = 0.7
    comment_probability_decay: Share = 0.1
    comment_probability_floor: Share = 0.1
    p_critic: Share = 0.4
    p_short: Share = 0.7
    short_words: WordRange = WordRange(min=1, max=10)
    long_words: WordRange = WordRange(min=10, max=50)
    max_depth: _Count = 5
    max_children: _Count = 3
    max_root_replies: _Count | None = None
    top_candidates: _Count = 10
    root_candidate_rounds: _Count = 1
    parent_choice: Literal["top"] = "top"
    caps: Literal["enforce", "original"] = "enforce"
    comment_votes: bool = False
    votes_per_voter: _Count = 5
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.8
    max_tokens: _Count = 120
    post_max_tokens: _Count = 240
    vote_temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.6
    vote_max_tokens: _Count = 70
    render: Literal["data", "verbatim"] = "data"

    @model_validator(mode="after")
    def _consistent(self) -> ThreadSettings:
        if self.comment_probability_floor > self.comment_probability:
            raise SpecFieldError("comment_probability_floor",
                                 f"must not exceed comment_probability ({self.comment_probability}), "
                                 f"got {self.comment_probability_floor}")
        if self.caps == "original" and self.max_root_replies is not None:
            raise SpecFieldError("max_root_replies", "caps: original applies the original's own rule to the post; "
                                 "leave max_root_replies unset or use caps: enforce")
        return self

    def comment_probability_in(self, round: int) -> float:
        """The probability that one action of round ``round`` (from 0) is a comment."""
        return max(self.comment_probability - self.comment_probability_decay * round, self.comment_probability_floor)

    @property
    def critics_per_round(self) -> int:
        """Critic draws per round: ``int(engaged_profiles * p_critic)`` (16 for the defaults)."""
        return int(self.engaged_profiles * self.p_critic)

    def check_population(self, n_personas: int, source: str = "threads") -> None:
        """Raise :class:`InputError` unless ``n_personas`` can author every thread and engage in each.

        Every thread's author is a persona who authors no other thread, and a thread's engaged personas
        come from the personas that have authored neither it nor an earlier thread, so the last thread
        draws from ``n_personas - n_threads`` personas.

        >>> ThreadSettings(n_threads=5).check_population(44)
        Traceback (most recent call last):
        ...
        pvsst.core.errors.InputError: threads: engaged_profiles: 40 engaged personas per thread need at least ...
        """
        needed = self.n_threads + self.engaged_profiles
        if n_personas < needed:
            raise InputError(source, "engaged_profiles",
                             f"{self.engaged_profiles} engaged personas per thread need at least {needed} personas "
                             f"({self.n_threads} to author the threads, {self.engaged_profiles} to engage), the "
                             f"persona table has {n_personas}")


def thread_settings(values: dict[str, Any] | None = None, source: str = "threads") -> ThreadSettings:
    """:class:`ThreadSettings` from a mapping (as read from YAML); bad values are an :class:`InputError`
    naming ``source``, the field and the problem."""
    try:
        return ThreadSettings.model_validate(values or {})
    except ValidationError as err:
        raise InputError(source, *describe_validation_error(err, ThreadSettings)) from None
