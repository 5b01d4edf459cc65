"""The report's belief-behaviour consistency section: the per-arm table, which judge read the posts, and
how far that judge agrees with the others that judged the run.

Examples
--------
>>> import pandas as pd
>>> summary = pd.DataFrame([{"model": "m", "condition": "likes", "metric": "like_rate_same_side", "n_blocks": 4,
...                          "mean": 0.6, "ci_low": 0.5, "ci_high": 0.7, "judge": None}])
>>> text = consistency_markdown({"belief_consistency": summary, "judge_agreement": pd.DataFrame()})
>>> "No stance judgments" in text, "0.6000 [0.5000, 0.7000]" in text
(True, True)
>>> agreement = pd.DataFrame({"first_judge": ["a", "a"], "second_judge": ["b", "c"], "n": 10,
...                           "raw_agreement": [0.9, 0.4], "side_agreement": 1.0, "kappa_linear": [0.8, 0.1],
...                           "kappa_quadratic": [0.9, 0.2]})
>>> text = consistency_markdown({"belief_consistency": summary.assign(judge="b"), "judge_agreement": agreement})
>>> text.splitlines()[-1]
'Lowest agreement: a vs c, linear weighted kappa 0.1000, raw agreement 0.4000 on 10 posts.'
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from pvsst.analysis.report.markdown import fmt, fmt_ci, markdown_table

DEFINITIONS = ("Per honest agent-round, the stance the agent reported with its post against the stance a judge "
               "reads in the post: exact agreement, agreement on side, contradiction (opposite sides), signed "
               "gap (judged - reported, stance points); and the like rate of votes on posts of the voter's own "
               "side and of the other side (by the author's reported stance; neutral voters and authors left "
               "out), with the chance rate (the like rate of all sided votes). Means over blocks, "
               "percentile-bootstrap intervals over blocks (Student-t intervals with fewer than 20 blocks); "
               "definitions in the statistics documentation.")


def consistency_markdown(tables: Mapping[str, pd.DataFrame]) -> str:
    """Markdown of ``belief_consistency`` and ``judge_agreement`` (the tables of ``RUN/analysis``)."""
    summary = tables.get("belief_consistency", pd.DataFrame())
    agreement = tables.get("judge_agreement", pd.DataFrame())
    if summary is None or summary.empty:
        return "_No belief-behaviour consistency to report (no sided votes and no stance judgments)._"
    judges = sorted({str(j) for j in summary.get("judge", pd.Series(dtype=object)).dropna() if str(j)})
    lines = [DEFINITIONS, ""]
    if judges:
        lines += [f"The post measure reads the judgments of the stance judge **{', '.join(judges)}**. A judged "
                  "measure is only as good as its judge: read it beside the agreement of the judges below.", ""]
    else:
        lines += ["No stance judgments: the post measure is empty (judge the posts with `pvsst judge RUN "
                  "--judge NAME`, then analyse again); the vote measure needs no judge.", ""]
    shown = summary.assign(estimate=[f"{fmt(mean)} {fmt_ci(low, high)}"
                                     for mean, low, high in zip(summary["mean"], summary["ci_low"],
                                                                summary["ci_high"])])
    lines += [markdown_table(shown[["model", "condition", "metric", "n_blocks", "estimate"]]), ""]
    if agreement is not None and len(agreement):
        worst = agreement.loc[agreement["kappa_linear"].fillna(-np.inf).idxmin()]
        lines += ["Agreement of the stance judges on the posts both judged (raw: same label; side: same side; "
                  "Cohen's weighted kappa, linear and quadratic):", "", markdown_table(agreement), "",
                  f"Lowest agreement: {worst['first_judge']} vs {worst['second_judge']}, linear weighted kappa "
                  f"{fmt(float(worst['kappa_linear']))}, raw agreement {fmt(float(worst['raw_agreement']))} on "
                  f"{int(worst['n'])} posts.", ""]
    elif judges:
        lines += ["Only one judge read the posts: no judge agreement to show (judge the run with a second "
                  "judge to see how far the first can be trusted).", ""]
    return "\n".join(lines).rstrip()
