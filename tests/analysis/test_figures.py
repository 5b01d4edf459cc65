"""Paper figures: the values drawn (read back from the matplotlib Axes) equal the analysis tables."""
from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
import pytest
from analysis_synthetic_run import write_run
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from reference_paths import PUBLISHED_ANALYSIS

from pvsst.analysis.figures import (
    contrast_forest_figure,
    contrasts_overview_figure,
    distribution_by_group_figure,
    fidelity_by_question_figure,
    homophily_null_figure,
    network_figure,
    similarity_by_round_figure,
    stance_trajectories_figure,
    survival_by_arm_figure,
)
from pvsst.analysis.figures.style import COLUMN_WIDTH_IN, OKABE_ITO, STANCE_CMAP
from pvsst.analysis.stats.block_tests import bootstrap_mean_ci
from pvsst.analysis.store.reader import load_run
from pvsst.analysis.study.run_analysis import analyze_run
from pvsst.core.errors import InputError

DRAWS = 500


@pytest.fixture(scope="module")
def analysed_run(tmp_path_factory):
    run = write_run(tmp_path_factory.mktemp("fig") / "run", imitation={"likes": 0.8}, with_edges=True)
    result = analyze_run(run, homophily_replicates=20)
    return run, result


def errorbar_values(container: ErrorbarContainer, axis: str = "y"):
    """(x, y, low, high) of an errorbar container: the data line plus the bar segments' ends."""
    line, _, bar_collections = container.lines
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    segments = bar_collections[0].get_segments()
    column = 1 if axis == "y" else 0
    low = np.array([min(s[0][column], s[1][column]) for s in segments])
    high = np.array([max(s[0][column], s[1][column]) for s in segments])
    return x, y, low, high


def test_forest_plot_draws_the_published_pvsst_rows_with_a_zero_line():
    published = pd.read_csv(PUBLISHED_ANALYSIS)
    figure = contrast_forest_figure(published, "engagement_likes_minus_control", "final_honest_pairwise_similarity")
    ax = figure.axes[0]
    rows = published[(published["contrast"] == "engagement_likes_minus_control")
                     & (published["metric"] == "final_honest_pairwise_similarity")]
    drawn = {}
    for container in ax.containers:
        x, y, low, high = errorbar_values(container, axis="x")
        for values in zip(y, x, low, high):
            drawn[values[0]] = values[1:]
    assert len(drawn) == len(rows) == 9  # overall + 4 models + 4 topics
    labels = [t.get_text() for t in ax.get_yticklabels()]
    for position, label in zip(ax.get_yticks(), labels):
        kind, _, name = label.partition(": ")
        row = rows[(rows["stratum_type"] == kind) & (rows["stratum"] == (name or "all"))].iloc[0]
        assert drawn[position] == pytest.approx((row["mean_difference"], row["ci95_low"], row["ci95_high"]), abs=1e-12)
    overall = rows[rows["stratum_type"] == "overall"].iloc[0]
    assert (round(overall["mean_difference"], 4), round(overall["ci95_low"], 4), round(overall["ci95_high"], 4)) \
        == (0.0082, 0.0043, 0.0121)  # the published headline (PV-SST, arXiv 2608.20438)
    assert any(t.get_text() == "+0.0082 [0.0043, 0.0121]" for t in ax.texts)
    assert any(np.allclose(line.get_xdata(), 0.0) and line.get_linestyle() == "--" for line in ax.lines)
    assert "n = 64 blocks overall" in figure.caption and "percentile bootstrap" in figure.caption
    assert figure.figure.get_size_inches()[0] == COLUMN_WIDTH_IN
    assert ax.get_xlabel() == "paired difference (TF-IDF cosine)"
    figure.close()


def test_contrasts_overview_has_one_row_per_contrast():
    published = pd.read_csv(PUBLISHED_ANALYSIS)
    figure = contrasts_overview_figure(published, "delta_alignment")
    expected = published[(published["metric"] == "delta_alignment") & (published["stratum_type"] == "overall")]
    x = np.concatenate([errorbar_values(c, axis="x")[0] for c in figure.axes[0].containers])
    assert x.tolist() == pytest.approx(expected["mean_difference"].tolist())
    figure.close()


def test_similarity_by_round_plots_block_means_and_bootstrap_cis(analysed_run):
    _, result = analysed_run
    per_round = result.per_round
    figure = similarity_by_round_figure(per_round, draws=DRAWS, seed=7)
    ax = figure.axes[0]
    assert len(ax.containers) == 4  # one line per arm
    for container in ax.containers:
        arm = container.get_label().replace(" ", "_")
        x, y, low, high = errorbar_values(container)
        for r, mean, lo, hi in zip(x, y, low, high):
            values = per_round[(per_round["condition"] == arm) & (per_round["round"] == r)]["pairwise_similarity"]
            assert mean == pytest.approx(values.mean(), abs=1e-12)
            # the same percentile bootstrap, computed independently cell by cell
            assert (lo, hi) == pytest.approx(bootstrap_mean_ci(values.to_numpy(float), draws=DRAWS, seed=7), abs=1e-12)
    likes = figure.data[figure.data["condition"] == "likes"]["mean"]
    control = figure.data[figure.data["condition"] == "control"]["mean"]
    assert (likes.to_numpy() > control.to_numpy()).all()  # the planted imitation effect
    assert "n = 8 blocks per point" in figure.caption
    assert ax.get_xlabel() == "round" and "cosine" in ax.get_ylabel()
    figure.close()


def test_stance_trajectories_one_panel_per_push_direction(analysed_run):
    _, result = analysed_run
    per_round = result.per_round
    figure = stance_trajectories_figure(per_round, draws=DRAWS)
    assert [ax.get_title() for ax in figure.axes] == ["push: support", "push: oppose"]
    for ax, direction in zip(figure.axes, ["support", "oppose"]):
        for container in ax.containers:
            arm = container.get_label().replace(" ", "_")
            x, y, _, _ = errorbar_values(container)
            expected = (per_round[(per_round["push_direction"] == direction) & (per_round["condition"] == arm)]
                        .groupby("round")["alignment"].mean())
            assert y.tolist() == pytest.approx(expected.reindex(x).tolist(), abs=1e-12)
    assert "n = 4 blocks per point" in figure.caption
    figure.close()


def test_survival_by_arm_means_and_trial_dots(analysed_run):
    _, result = analysed_run
    outcomes = result.trial_outcomes
    figure = survival_by_arm_figure(outcomes, draws=DRAWS)
    ax = figure.axes[0]
    _, y, _, _ = errorbar_values(ax.containers[0])
    arms = [t.get_text().replace("\n", "_") for t in ax.get_xticklabels()]
    assert arms == ["control", "likes", "single_source", "distributed_sources"]
    expected = outcomes.groupby("condition")["opposite_side_survival"].mean()
    assert y.tolist() == pytest.approx(expected.reindex(arms).tolist(), abs=1e-12)
    dots = sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
    assert dots == outcomes["opposite_side_survival"].notna().sum() == 32
    figure.close()


def test_homophily_figure_draws_observed_against_the_null_range(analysed_run):
    _, result = analysed_run
    homophily = result.homophily
    figure = homophily_null_figure(homophily)
    rows = homophily[(homophily["measure"] == "attribute_assortativity:initial_side")
                     & (homophily["null"] == "label_shuffle")].dropna(subset=["observed", "null_sd"])
    for ax, graph in zip(figure.axes, ["follow", "likes"]):
        expected = rows[rows["graph"] == graph].sort_values("trial_id").head(24)
        bars = next(c for c in ax.collections if isinstance(c, LineCollection))
        segments = bars.get_segments()
        assert [s[0][0] for s in segments] == pytest.approx(
            (expected["null_mean"] - 1.959963984540054 * expected["null_sd"]).tolist())
        assert [s[1][0] for s in segments] == pytest.approx(
            (expected["null_mean"] + 1.959963984540054 * expected["null_sd"]).tolist())
        observed = next(line for line in ax.lines if line.get_label() == "observed")
        assert list(observed.get_xdata()) == pytest.approx(expected["observed"].tolist())
    figure.close()


def test_network_nodes_are_coloured_by_final_stance(analysed_run):
    run, _ = analysed_run
    data = load_run(run)
    trial_id = "m1-t1-101-single_source"
    tables = data.trial(trial_id)
    figure = network_figure(tables["agents"], tables["posts"], tables["votes"], tables["edges"], trial_label=trial_id)
    ax = figure.axes[0]
    honest_points, adversary_points = [c for c in ax.collections if isinstance(c, PathCollection)]
    posts = tables["posts"]
    honest = tables["agents"][tables["agents"]["role"] == "honest"]["agent_id"]
    last = posts[posts["agent_id"].isin(honest)].sort_values("round").groupby("agent_id")["stance"].last()
    data_rows = figure.data[figure.data["role"] == "honest"]
    expected_colours = mpl.colormaps[STANCE_CMAP](
        mpl.colors.Normalize(-3, 3)(last.reindex(data_rows["agent_id"]).to_numpy(float)))
    assert np.allclose(honest_points.get_facecolors(), expected_colours)
    assert len(adversary_points.get_offsets()) == 1  # the single source
    assert "6 honest agents" in figure.caption
    figure.close()
    with pytest.raises(InputError, match="network drawings"):
        network_figure(tables["agents"], tables["posts"], max_nodes=3)


def test_fidelity_figures_read_the_fidelity_table_format():
    questions = ["q_trust", "q_tax", "q_climate"]
    providers = ["embedded/smollm2-135m", "scripted/oracle", "scripted/marginal", "scripted/uniform"]
    rng = np.random.default_rng(3)
    rows = []
    for q in questions:
        for p in providers:
            for group in ("all", "age:18-29"):
                value = float(rng.uniform(0.05, 0.5))
                rows.append({"question": q, "group": group, "metric": "js_distance", "provider": p,
                             "value": value, "ci_low": value - 0.02, "ci_high": value + 0.03})
    fidelity = pd.DataFrame(rows)
    figure = fidelity_by_question_figure(fidelity)
    ax = figure.axes[0]
    assert [c.get_label() for c in ax.containers] == providers  # simulator first, then the three controls
    for container, provider in zip(ax.containers, providers):
        x, y, low, high = errorbar_values(container, axis="x")
        expected = fidelity[(fidelity["provider"] == provider) & (fidelity["group"] == "all")]
        assert x.tolist() == pytest.approx(expected["value"].tolist())
        assert low.tolist() == pytest.approx(expected["ci_low"].tolist())
        assert high.tolist() == pytest.approx(expected["ci_high"].tolist())
    assert "n = 3 questions" in figure.caption and "Jensen-Shannon" in ax.get_xlabel()
    figure.close()
    with pytest.raises(InputError, match="no rows for 'kl'"):
        fidelity_by_question_figure(fidelity, "kl")

    options = ["agree", "neutral", "disagree"]
    shares = {("human", "north"): [0.5, 0.3, 0.2], ("human", "south"): [0.2, 0.2, 0.6],
              ("model", "north"): [0.4, 0.4, 0.2], ("model", "south"): [0.3, 0.3, 0.4]}
    long = pd.DataFrame([{"question": "q_trust", "group": g, "option": o, "option_order": i, "source": s, "share": v}
                         for (s, g), values in shares.items() for i, (o, v) in enumerate(zip(options, values))])
    figure = distribution_by_group_figure(long, "q_trust")
    for ax, group in zip(figure.axes, ["north", "south"]):
        human, simulated = [c for c in ax.containers if isinstance(c, BarContainer)]
        assert [b.get_height() for b in human] == pytest.approx(shares[("human", group)])
        assert [b.get_height() for b in simulated] == pytest.approx(shares[("model", group)])
        assert [t.get_text() for t in ax.get_xticklabels()] == options
    figure.close()


def test_style_colour_blind_palette_and_both_file_formats(analysed_run, tmp_path):
    _, result = analysed_run
    figure = similarity_by_round_figure(result.per_round, draws=DRAWS)
    colours = {mpl.colors.to_hex(c.lines[0].get_color()).upper() for c in figure.axes[0].containers}
    assert colours <= set(OKABE_ITO)
    paths = figure.save(tmp_path, ["png", "pdf"])
    assert [p.name for p in paths] == ["similarity_by_round.png", "similarity_by_round.pdf"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and paths[1].read_bytes()[:5] == b"%PDF-"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    figure.close()


def test_group_shares_with_long_source_names_keep_each_panels_labels_off_its_neighbours():
    import warnings

    from pvsst.analysis.figures.survey.groups import group_shares_figure

    sources = ["human", "embedded/planted_answer_null | persona_profile",
               "embedded/planted_answer_null | persona_profile_verbalized (verbalized)"]
    rows = [{"question": q, "source": s, "group": f"{axis}={level}", "option": o, "position": p, "share": 0.5,
             "n_units": 12} for q in ("q1", "q2") for axis, levels in (("party", ("D", "R")), ("sex", ("f", "m")),
                                                                       ("race", ("b", "w")), ("college", ("y", "n")))
            for level in levels for s in sources for p, o in enumerate(("yes", "no"))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # constrained layout gives up (a warning) when the labels leave no room
        figure = group_shares_figure(pd.DataFrame(rows))
        figure.png_bytes()
    renderer = figure.figure.canvas.get_renderer()
    panels = [ax for ax in figure.axes if ax.get_visible()]
    assert len(panels) == 8
    for ax in panels:
        labels = [t.get_window_extent(renderer) for t in ax.get_yticklabels() if t.get_text()]
        others = [other.get_window_extent(renderer) for other in panels if other is not ax]
        assert not any(label.overlaps(other) for label in labels for other in others), ax.get_title()
    figure.close()
