"""Under logprobs an audit measures whole distributions: the tables a reader sees (the report's audit table,
its power lines and `pvsst survey score`'s console table) show the expected flip rate as the flip rate, the
mean total variation between members beside it, and the MDE as a shift of one group's mean probability."""
from __future__ import annotations

import io

import pandas as pd
from rich.console import Console

from pvsst.analysis.report.survey.audit import audit_markdown, power_lines
from pvsst.experiments.cli.survey import _audit_view


def _questions() -> pd.DataFrame:
    # one group of four shifted by 0.15 over three options at 1/3: expected flip rate 1 - 1/27 = 0.963, mean
    # pairwise TV 0.15 x 3 / 6 = 0.075
    return pd.DataFrame({
        "model": ["m", "m"], "condition": ["c", "c"], "elicitation": ["logprobs", "sample"], "question": ["q", "r"],
        "n_sets": [50, 50], "n_groups": [4, 4], "flip_rate": [0.963, 0.4], "flip_rate_low": [0.962, 0.3],
        "flip_rate_high": [0.964, 0.5], "share_spread": [0.15, 0.2], "share_spread_low": [0.14, 0.1],
        "share_spread_high": [0.16, 0.3], "member_tv": [0.075, float("nan")], "member_tv_low": [0.075, float("nan")],
        "member_tv_high": [0.075, float("nan")], "omnibus_p_bh": [0.3, 0.5], "flagged": [False, False],
        "mde": [0.041, 0.36], "mde_unit": ["probability", "share"], "note": ["", ""]})


def test_the_report_table_shows_the_expected_flip_rate_and_member_tv_of_distribution_rows():
    lines = audit_markdown(_questions()).splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    logprobs = dict(zip(header, (c.strip() for c in lines[2].strip("|").split("|"))))
    sample = dict(zip(header, (c.strip() for c in lines[3].strip("|").split("|"))))
    assert logprobs["flip rate"] == "0.963 [0.962, 0.964]" and logprobs["MDE (80%)"] == "0.041"
    assert logprobs["member TV"] == "0.075 [0.075, 0.075]"
    assert sample["member TV"] == "" and "expected flip rate" not in header


def test_an_unflagged_distribution_row_reads_with_its_mde_in_probability():
    lines = power_lines(_questions())
    assert lines[0] == ("- m | c, q: nothing flagged; this audit detects shifts of at least 0.041 in one group's "
                        "mean probability of an option with 80% power.")
    assert "in one group's share of an option" in lines[1]
    zero = power_lines(_questions().assign(mde=[0.0, 0.36]))[0]
    assert "detects any shift in one group's mean probability of an option with 80% power" in zero


def test_the_console_table_shows_member_tv_and_leaves_it_out_when_no_row_has_it():
    out = io.StringIO()
    Console(file=out, width=400).print(_audit_view(_questions(), "audit.csv"))
    text = out.getvalue()
    assert "member_tv" in text and "0.075" in text and "expected_flip_rate" not in text and "nan" not in text
    out = io.StringIO()
    sampled = _questions().drop(index=0).assign(member_tv=float("nan"))
    Console(file=out, width=400).print(_audit_view(sampled, "audit.csv"))
    assert "member_tv" not in out.getvalue()
