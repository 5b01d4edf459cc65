"""`pvsst audit plan`: how many matched sets an audit needs to flag a target shift, before anything runs."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer

from pvsst.core.errors import InputError
from pvsst.experiments.cli.groups import command_group
from pvsst.experiments.cli.lazy import lazy_module

power = lazy_module("pvsst.analysis.counterfactual.power")
yaml_file = lazy_module("pvsst.core.yaml_file")
survey_spec = lazy_module("pvsst.experiments.survey.spec")
spec_study = lazy_module("pvsst.experiments.spec.study")
thread_study = lazy_module("pvsst.experiments.spec.thread_study")
study_audit = lazy_module("pvsst.analysis.study.audit")

audit_app = command_group("Plan counterfactual persona audits.")


@dataclass(frozen=True)
class AuditDesign:
    """What an audit's power depends on: its groups, each question's options, the omnibus statistic, the
    size of the Benjamini-Hochberg family, alpha and the matched sets it asks (None without a spec)."""

    name: str
    n_groups: int
    options: dict[str, int]
    statistic: str
    tests: int
    alpha: float
    matched_sets: int | None


def design_of(path: Path) -> AuditDesign:
    """The audit design of a survey instrument or a study spec with an ``audit`` section.

    A survey audit tests every asked model and control x condition x question in one family (shares
    statistic); a study audit every model x topic x question (``post_stance``, ``net_vote``; scores
    statistic).
    """
    if thread_study.is_thread_spec(path):
        raise InputError(str(path), "schedule", "a thread study has no audit section")
    if "questions" in yaml_file.read_yaml_mapping(path):
        spec = survey_spec.load_survey(path)
        if spec.audit is None:
            raise InputError(str(path), "audit", "the instrument has no audit section: nothing to plan")
        sources = (len(spec.asked_models) + len(spec.controls)) * len(spec.conditions)
        return AuditDesign(spec.id, spec.audit.n_groups, {q.id: len(q.codes) for q in spec.questions}, "shares",
                           sources * len(spec.questions), spec.audit.alpha, spec.audit.matched_sets)
    spec = spec_study.load_spec(path)
    if spec.audit is None:
        raise InputError(str(path), "audit", "the study spec has no audit section: nothing to plan")
    codes = study_audit.question_codes(spec.trial.votes_per_voter)
    units = len(spec.factors.models) * len(spec.factors.topics)
    return AuditDesign(spec.id, spec.audit.n_groups, {q: len(c) for q, c in codes.items()}, "scores",
                       units * len(codes), spec.audit.alpha, spec.audit.matched_sets)


@audit_app.command("plan")
def plan(
    spec: Optional[Path] = typer.Argument(None, help="A survey instrument or study spec with an audit section "
                                          "(or give --groups and --options)."),
    effect: float = typer.Option(..., "--effect", help="The target shift of one group: its share of one option "
                                 "(survey audits) or its mean score in score points (study audits)."),
    target_power: float = typer.Option(0.80, "--power", help="The power to plan for."),
    base_share: float = typer.Option(0.5, "--base-share", help="The shifted option's share before the shift "
                                     "(shares; 0.5 needs the most sets)."),
    score_sd: float = typer.Option(1.0, "--score-sd", help="The residual SD of a member's score within its set "
                                   "and group, in score points (scores; a pilot audit's power_score_sd)."),
    groups: Optional[int] = typer.Option(None, "--groups", help="Without a spec: the groups of a matched set."),
    options: Optional[int] = typer.Option(None, "--options", help="Without a spec: the options of the question."),
    statistic: str = typer.Option("shares", "--statistic", help="Without a spec: shares or scores."),
    tests: int = typer.Option(1, "--tests", help="Without a spec: the tests in the Benjamini-Hochberg family."),
    alpha: float = typer.Option(0.05, "--alpha", help="Without a spec: the false discovery rate."),
) -> None:
    """Print the matched sets a target shift needs to be flagged with 80% power (noncentral chi-square).

    One group's share of one option (or its mean score) moves by --effect; the omnibus test is made at
    alpha / (the tests of its Benjamini-Hochberg family). Exit 2 on bad input.
    """
    if spec is not None:
        design = design_of(spec)
    else:
        if groups is None or options is None:
            raise InputError("pvsst audit plan", "spec", "give an instrument or study spec, or --groups and --options")
        design = AuditDesign("audit", groups, {"question": options}, statistic, tests, alpha, None)
    size = {"base_share": base_share, "score_sd": score_sd, "alpha": design.alpha, "tests": design.tests}
    what = (f"a shift of {effect:g} in one group's share of an option (base share {base_share:g})"
            if design.statistic == "shares" else
            f"a shift of {effect:g} score points in one group's mean score (residual SD {score_sd:g})")
    lines = []  # every number first: bad input exits 2 before anything is printed
    for question, k in design.options.items():
        needed = power.sets_needed(effect, n_groups=design.n_groups, n_options=k, statistic=design.statistic,
                                   power=target_power, **size)
        line = f"  {question} ({k} options): {needed:,} matched sets"
        if design.matched_sets is not None:
            at = power.omnibus_power(design.matched_sets, effect, n_groups=design.n_groups, n_options=k,
                                     statistic=design.statistic, **size)
            mde = power.detectable_shift(design.matched_sets, n_groups=design.n_groups, n_options=k,
                                         statistic=design.statistic, power=target_power, **size)
            detects = f"shifts of at least {mde:.3f}" if math.isfinite(mde) else "no shift"
            line += (f"; the spec's {design.matched_sets} sets have power {at:.2f} and detect {detects} with "
                     f"{target_power:.0%} power")
        lines.append(line)
    print(f"{design.name}: {what}, {design.n_groups} groups, omnibus {design.statistic} test at alpha "
          f"{design.alpha:g} / {design.tests} (the Benjamini-Hochberg family's tests), {target_power:.0%} power:")
    print("\n".join(lines))


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")
