"""Markdown building blocks of the report: tables, number formats, the plan, verdicts, deviations.

Every function returns Markdown text (GitHub/CommonMark tables via pandas ``to_markdown``, i.e.
tabulate), so ``report.md`` reads on its own and the HTML is rendered from the very same text.

Examples
--------
>>> import pandas as pd
>>> print(markdown_table(pd.DataFrame({"x": [0.123456], "y": ["a|b"]})).splitlines()[-1])
| 0.1235 | a\\|b |
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import pandas as pd

from pvsst.analysis.report.verdicts import HypothesisVerdict

PLAN_KEYS_SHOWN = ("contrasts", "metrics", "bootstrap_draws", "bootstrap_seed", "randomization", "alpha",
                   "consistency", "multiplicity", "parse_failure_threshold")


def fmt(value, digits: int = 4) -> str:
    """A number for a table: signed fixed point for differences, ``-`` for missing.

    >>> fmt(0.00821), fmt(float("nan")), fmt(12)
    ('0.0082', '-', '12')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, (bool,)):
        return "yes" if value else "no"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) >= 1):
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) >= 10 ** -digits or value == 0 else f"{value:.2e}"
    return str(value)


def fmt_signed(value, digits: int = 4) -> str:
    """``+0.0082`` / ``-0.0010`` (``-`` when missing)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{float(value):+.{digits}f}"


def fmt_p(value) -> str:
    """p-values: 4 significant digits, ``-`` when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{float(value):.4g}"


def fmt_ci(low, high, digits: int = 4) -> str:
    """``[0.0043, 0.0121]`` (the published style; ``-`` for a missing bound).

    >>> fmt_ci(0.00432, -0.0121)
    '[0.0043, -0.0121]'
    """
    def bound(value) -> str:
        return ("-" if value is None or (isinstance(value, float) and math.isnan(value))
                else f"{float(value):.{digits}f}")
    return f"[{bound(low)}, {bound(high)}]"


def markdown_table(frame: pd.DataFrame, floatfmt: str = ".4g") -> str:
    """A pipe table; ``|`` inside cells and column names is escaped so the table keeps its columns.

    >>> print(markdown_table(pd.DataFrame({"m | c": ["a|b"]})))
    | m \\| c   |
    |:---------|
    | a\\|b     |
    """
    if frame.empty:
        return "_(no rows)_"
    safe = frame.copy()
    safe.columns = [str(c).replace("|", "\\|") for c in safe.columns]
    for column in safe.columns:
        if pd.api.types.is_float_dtype(safe[column]):
            safe[column] = safe[column].map(lambda v: "-" if pd.isna(v) else format(v, floatfmt))
        elif not pd.api.types.is_numeric_dtype(safe[column]):
            safe[column] = safe[column].map(lambda v: str(v).replace("|", "\\|"))
    # disable_numparse: keep "+0.0082" as written (tabulate would re-parse it as 0.0082)
    return safe.to_markdown(index=False, floatfmt=floatfmt, disable_numparse=True)


def bullet_list(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items) if items else "- (none)"


def hypotheses_table(hypotheses: Sequence[Mapping], contrasts_plan: Mapping) -> str:
    """The preregistered hypotheses: id, statement, contrast (treatment - control), metric, direction."""
    rows = []
    for h in hypotheses:
        arms = contrasts_plan.get(h.get("contrast"), {})
        definition = (f"{arms.get('treatment')} - {arms.get('control', arms.get('baseline'))}"
                      if arms else "")
        rows.append({"id": h.get("id"), "primary": "yes" if h.get("primary") else "no",
                     "statement": h.get("statement", ""),
                     "contrast": f"{h.get('contrast')}" + (f" = {definition}" if definition else ""),
                     "metric": h.get("metric"), "direction": h.get("direction")})
    return markdown_table(pd.DataFrame(rows))


def plan_table(analysis_section: Mapping, outcomes: Mapping | None) -> str:
    """The frozen analysis plan as key / value rows (nested values as compact JSON)."""
    rows = []
    if outcomes:
        rows.append({"item": "primary outcomes", "frozen value": ", ".join(outcomes.get("primary") or [])})
        rows.append({"item": "secondary outcomes", "frozen value": ", ".join(outcomes.get("secondary") or [])})
    for key in PLAN_KEYS_SHOWN:
        if key not in analysis_section:
            continue
        value = analysis_section[key]
        if key == "contrasts" and isinstance(value, Mapping):
            value = "; ".join(f"{name} = {arms.get('treatment')} - {arms.get('control', arms.get('baseline'))}"
                              if isinstance(arms, Mapping) else f"{name} = {arms}" for name, arms in value.items())
        elif isinstance(value, (Mapping, list)):
            value = json.dumps(value, sort_keys=True) if value else "(default)"
        rows.append({"item": key.replace("_", " "), "frozen value": str(value)})
    return markdown_table(pd.DataFrame(rows))


def design_table(spec: Mapping) -> str:
    """Factors and the main trial parameters of the frozen spec."""
    factors = spec.get("factors") or {}
    trial = spec.get("trial") or {}
    rows = []
    for key in ("models", "topics", "seeds", "conditions"):
        values = factors.get(key) or []
        shown = [v.get("id", v) if isinstance(v, Mapping) else v for v in values]
        if not shown:
            continue
        rows.append({"item": key, "frozen value": ", ".join(map(str, shown))})
    blocks = (spec.get("blocks") or {}).get("block_key")
    if blocks:
        rows.append({"item": "block", "frozen value": " x ".join(blocks)})
    for key in ("n_agents", "n_rounds", "feed_size", "votes_per_voter", "memory_rounds", "temperature",
                "max_tokens", "max_attempts", "follow_dynamics"):
        if key in trial:
            rows.append({"item": key.replace("_", " "), "frozen value": str(trial[key])})
    return markdown_table(pd.DataFrame(rows))


VERDICT_RULE = (
    "Verdict rule (from the frozen plan): **SUPPORTED** needs the effect to be *consistent* (the hypothesised "
    "sign overall and in at least the preregistered shares of model and topic strata; the observed sign for "
    "two-sided hypotheses) **and** significant (sign-flip randomization p < alpha for a primary hypothesis; "
    "the multiplicity-adjusted p across secondary hypotheses for a secondary one). **CONTRADICTED**: "
    "significant with the opposite sign. **NOT POWERED**: too few blocks for the exact test to reach alpha "
    "at all (smallest attainable p = 2 / 2^n). Otherwise **NOT SUPPORTED**.")


def verdicts_table(verdicts: Sequence[HypothesisVerdict]) -> str:
    """Hypothesis beside the result: estimate, CI, p-values, consistency, verdict and why."""
    rows = []
    for v in verdicts:
        c = v.consistency
        rows.append({
            "hypothesis": f"{v.id}{' (primary)' if v.primary else ''}",
            "preregistered": f"{v.contrast} on {v.metric}, {v.direction.replace('_', '-')}",
            "blocks": v.n_blocks, "mean diff": fmt_signed(v.mean_difference),
            "95% CI": fmt_ci(v.ci_low, v.ci_high), "sign p": fmt_p(v.sign_test_p),
            "perm p": fmt_p(v.randomization_p), "adj. p": fmt_p(v.adjusted_p),
            "consistent": ("-" if c is None else f"{'yes' if c.passed else 'no'} "
                           f"({c.models_positive}/{c.n_models} models, {c.topics_positive}/{c.n_topics} topics)"),
            "verdict": f"**{v.verdict}**", "why": v.reason})
    return markdown_table(pd.DataFrame(rows))


def headline_markdown(headline: pd.DataFrame) -> str:
    """The headline table: each contrast on the primary metric, overall."""
    if headline.empty:
        return "_(no headline rows)_"
    rows = []
    for r in headline.to_dict("records"):
        row = {"contrast": r["contrast"], "metric": r["metric"], "blocks": int(r["n_blocks"]),
               "mean diff": fmt_signed(r["mean_difference"]), "median diff": fmt_signed(r["median_difference"]),
               "95% CI": fmt_ci(r["ci95_low"], r["ci95_high"]),
               "+/-/0": f"{int(r['positive'])}/{int(r['negative'])}/{int(r['ties'])}",
               "sign p": fmt_p(r["sign_test_p"]), "perm p": fmt_p(r["randomization_p"])}
        if "adjusted_p" in r:
            row[f"adjusted p ({r.get('multiplicity', '?')})"] = fmt_p(r["adjusted_p"])
        if "consistency_pass" in r:
            row["consistent"] = (f"{'yes' if _truthy(r['consistency_pass']) else 'no'} "
                                 f"({r.get('models_positive')} models, {r.get('topics_positive')} topics)")
        if "mixed_coefficient" in r:
            row["mixed model"] = (f"{fmt_signed(r['mixed_coefficient'])} "
                                  f"{fmt_ci(r.get('mixed_ci_low'), r.get('mixed_ci_high'))}")
        rows.append(row)
    return markdown_table(pd.DataFrame(rows))


def overall_contrasts_markdown(contrasts: pd.DataFrame) -> str:
    """Every contrast x metric, overall stratum."""
    overall = contrasts[contrasts["stratum_type"] == "overall"]
    rows = [{"contrast": r["contrast"], "metric": r["metric"], "blocks": int(r["n_blocks"]),
             "mean diff": fmt_signed(r["mean_difference"]), "95% CI": fmt_ci(r["ci95_low"], r["ci95_high"]),
             "+/-/0": f"{int(r['positive'])}/{int(r['negative'])}/{int(r['ties'])}",
             "sign p": fmt_p(r["sign_test_p"]), "perm p": fmt_p(r["randomization_p"])}
            for r in overall.to_dict("records")]
    return markdown_table(pd.DataFrame(rows))


def deviations_markdown(deviations: Sequence[Mapping], frozen_sha: str | None, current_sha: str | None) -> str:
    """The deviations recorded in the manifest, or a plain statement that there were none."""
    if not deviations:
        if frozen_sha and current_sha and frozen_sha == current_sha:
            return f"**No deviations.** The run used exactly the frozen spec (sha256 `{current_sha}`)."
        if frozen_sha and current_sha:
            return (f"**WARNING: no deviation was recorded, yet the run's spec hash `{current_sha}` differs from "
                    f"the frozen `{frozen_sha}`.**")
        return ("**No deviations were recorded.** The manifest holds no frozen hash to compare the run's spec "
                "with, so this cannot be checked here.")
    parts = [f"**{len(deviations)} deviation(s) from the preregistration were recorded:**", ""]
    for i, d in enumerate(deviations, 1):
        changed = d.get("changed_fields") or []
        parts.append(f"{i}. {d.get('text', '(no reason given)')} (at {d.get('at', '?')}; frozen "
                     f"`{str(d.get('frozen_sha256') or 'none')[:12]}` -> run "
                     f"`{str(d.get('current_sha256') or '?')[:12]}`)"
                     + ("; changed: " + "; ".join(f"`{c}`" for c in changed) if changed else ""))
    return "\n".join(parts)


def _truthy(value) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes") if not isinstance(value, bool) else value
