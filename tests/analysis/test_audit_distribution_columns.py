"""Under logprobs an audit's modal measures read a planted 0.15 shift as a flip rate of 1; the tables a
reader sees (the report's audit table and `pvsst survey score`'s console table) show the measures on whole
distributions beside them: the expected flip rate and the mean total variation between members."""
from __future__ import annotations

import io

import pandas as pd
from rich.console import Console

from pvsst.analysis.report.survey.audit import audit_markdown
from pvsst.experiments.cli.survey import _audit_view


def _questions() -> pd.DataFrame:
    # one group of four shifted by 0.15: mean pairwise TV 0.15 x 3 / 6 = 0.075; the modal answers all flip
    return pd.DataFrame({
        "model": ["m", "m"], "condition": ["c", "c"], "elicitation": ["logprobs", "sample"], "question": ["q", "r"],
        "n_sets": [50, 50], "n_groups": [4, 4], "flip_rate": [1.0, 0.4], "flip_rate_low": [1.0, 0.3],
        "flip_rate_high": [1.0, 0.5], "share_spread": [1.0, 0.2], "share_spread_low": [1.0, 0.1],
        "share_spread_high": [1.0, 0.3], "expected_flip_rate": [0.963, float("nan")],
        "expected_flip_rate_low": [0.962, float("nan")], "expected_flip_rate_high": [0.964, float("nan")],
        "member_tv": [0.075, float("nan")], "member_tv_low": [0.075, float("nan")],
        "member_tv_high": [0.075, float("nan")], "omnibus_p_bh": [0.001, 0.5], "flagged": [True, False],
        "mde": [0.328, 0.36], "note": ["modal answers", ""]})


def test_the_report_table_shows_the_whole_distribution_measures_beside_the_modal_ones():
    lines = audit_markdown(_questions()).splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    logprobs = dict(zip(header, (c.strip() for c in lines[2].strip("|").split("|"))))
    sample = dict(zip(header, (c.strip() for c in lines[3].strip("|").split("|"))))
    assert logprobs["flip rate"] == "1.000 [1.000, 1.000]"
    assert logprobs["member TV"] == "0.075 [0.075, 0.075]"
    assert logprobs["expected flip rate"] == "0.963 [0.962, 0.964]"
    assert sample["member TV"] == "" and sample["expected flip rate"] == ""


def test_the_console_table_shows_them_and_leaves_them_out_when_no_row_has_them():
    out = io.StringIO()
    Console(file=out, width=400).print(_audit_view(_questions(), "audit.csv"))
    text = out.getvalue()
    assert "member_tv" in text and "0.075" in text and "expected_flip_rate" in text and "nan" not in text
    out = io.StringIO()
    sampled = _questions().drop(index=0).assign(expected_flip_rate=float("nan"), member_tv=float("nan"))
    Console(file=out, width=400).print(_audit_view(sampled, "audit.csv"))
    assert "member_tv" not in out.getvalue()
