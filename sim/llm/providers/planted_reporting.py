"""A planted reporting respondent: its yes-probability depends on the persona's income and nothing else.

``scripted/planted_income_reporting`` answers a yes / no question (its first listed code is the decision
"yes") with P(yes) = :attr:`PlantedIncomeReporting.p_high` when the prompt names a persona income of
$50,000 or more (the persona cards write ``personal income: $50,000-$99,999`` or ``$100,000 or more``)
or a household income of $70,000 or more (``household income: $70,000 or more``), and
:attr:`PlantedIncomeReporting.p_low` otherwise, whatever else the prompt says (a scenario vignette,
the persona's sex or region). Asked for a distribution (``logprobs`` or ``verbalized``) it returns the
distribution it draws from; a sampled answer is drawn from the request's seed
(:func:`pvsst.sim.llm.providers.scripted.request_rng`). The decomposition of its answers must give
income the whole of the explained variation; ``scripted/planted_answer_null`` (uniform answers) is its
null.

``scripted/planted_household_reporting`` plants household influence instead: P(yes) is
:attr:`PlantedHouseholdReporting.p_after_yes` (0.9) when the prompt says a household member got tested
and reported (``reported them``), :attr:`~PlantedHouseholdReporting.p_after_no` (0.1) when it says one
did not (``did not get tested or report``), and :attr:`~PlantedHouseholdReporting.p_alone` (0.5)
otherwise: the household vignettes of ``experiments/surveys/census_flu_reporting.yaml``.

Examples
--------
>>> from pvsst.sim.llm.types import LLMRequest
>>> ask = lambda card: LLMRequest(model_name="scripted/planted_income_reporting", seed=1, option_scoring=("yes", "no"),
...                               messages=({"role": "user", "content": card},))
>>> PlantedIncomeReporting().reply(ask("A woman, personal income: $100,000 or more a year.")).text
'{"probabilities": {"yes": 0.8, "no": 0.2}}'
>>> PlantedIncomeReporting().reply(ask("A woman, personal income: under $25,000 a year.")).text
'{"probabilities": {"yes": 0.2, "no": 0.8}}'
"""
from __future__ import annotations

import json
import re

from pvsst.sim.llm.option_probabilities import distribution_reply
from pvsst.sim.llm.providers.planted import _distribution_codes, _prompt
from pvsst.sim.llm.providers.scripted import prompt_word_count, request_rng, word_count
from pvsst.sim.llm.types import LLMRequest, ProviderReply

HIGH_INCOME = re.compile(r"income: \$(50,000|70,000|100,000)")
MEMBER_DID_NOT_REPORT = re.compile(r"did not get tested or report")
MEMBER_REPORTED = re.compile(r"\breported them\b")


class PlantedIncomeReporting:
    """P(first code) is ``p_high`` for a persona with a personal income of $50,000 or more or a household
    income of $70,000 or more, else ``p_low``."""

    name = "planted_income_reporting"
    returns_distributions = True
    p_high = 0.8
    p_low = 0.2

    def p_yes(self, prompt: str) -> float:
        """P(first code) for a prompt."""
        return self.p_high if HIGH_INCOME.search(prompt) else self.p_low

    def distribution(self, codes: list[str], prompt: str) -> dict[str, float]:
        """The answer distribution: the first code gets P(yes), the others share the rest equally."""
        yes = self.p_yes(prompt)
        rest = (1 - yes) / (len(codes) - 1)
        return {code: (yes if i == 0 else rest) for i, code in enumerate(codes)}

    def reply(self, request: LLMRequest) -> ProviderReply:
        prompt = _prompt(request)
        asked = _distribution_codes(request)
        if asked is not None:
            probabilities = self.distribution(asked, prompt)
            text = distribution_reply({code: round(p, 12) for code, p in probabilities.items()})
            return ProviderReply(text=text, prompt_tokens=prompt_word_count(request), completion_tokens=len(asked))
        codes = list(((request.schema or {}).get("properties", {}).get("answer") or {}).get("enum") or [])
        probabilities = self.distribution(codes, prompt)
        pick = codes[int(request_rng(request).choice(len(codes), p=list(probabilities.values())))]
        text = json.dumps({"answer": pick})
        return ProviderReply(text=text, prompt_tokens=prompt_word_count(request), completion_tokens=word_count(text))


class PlantedHouseholdReporting(PlantedIncomeReporting):
    """P(first code) set by the household vignette alone (see the module docstring)."""

    name = "planted_household_reporting"
    p_alone = 0.5
    p_after_yes = 0.9
    p_after_no = 0.1

    def p_yes(self, prompt: str) -> float:
        if MEMBER_DID_NOT_REPORT.search(prompt):
            return self.p_after_no
        return self.p_after_yes if MEMBER_REPORTED.search(prompt) else self.p_alone
