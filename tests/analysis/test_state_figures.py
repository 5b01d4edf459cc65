"""State figures render what they claim: 51 tiles with a colour bar, the identity line and the oracle beside
the model."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle
from report_checks import colorbar_problems, legend_problems

from pvsst.analysis.figures.survey.states import (
    TILE_LAYOUT,
    group_errors_figure,
    state_scatter_figure,
    state_tile_map_figure,
)
from pvsst.analysis.survey.cells.state_scores import score_states, uniform_shares
from pvsst.core.errors import InputError
from pvsst.personas.geography import STATE_CODES, STATE_NAME


def _tiles(figure) -> dict[str, Rectangle]:
    return {p.get_gid()[5:]: p for p in figure.axes[0].patches if (p.get_gid() or "").startswith("tile-")}


def test_tile_map_draws_51_tiles_coloured_by_value_with_a_colour_bar(tmp_path):
    values = pd.Series({STATE_NAME[c]: i / 50 for i, c in enumerate(STATE_CODES) if c != "DC"})  # names accepted
    figure = state_tile_map_figure(values, label="simulated Trump share")
    tiles = _tiles(figure)
    assert len(tiles) == 51 and set(tiles) == set(STATE_CODES)
    assert len({(t.get_x(), t.get_y()) for t in tiles.values()}) == 51             # no two tiles overlap
    assert len(figure.axes) == 2 and figure.axes[1].get_ylabel() == "simulated Trump share"   # the colour bar
    assert tiles["DC"].get_hatch() == "////" and tiles["OH"].get_hatch() is None
    assert tiles["AL"].get_facecolor() != tiles["WY"].get_facecolor()
    assert figure.data.set_index("state").loc["OH", "value"] == pytest.approx(STATE_CODES.index("OH") / 50)
    assert (figure.data.set_index("state").loc["ME", ["row", "column"]].tolist() == list(TILE_LAYOUT["ME"]))
    assert "1 hatched" in figure.caption
    paths = figure.save(tmp_path)
    assert all(p.stat().st_size > 1000 for p in paths)
    figure.close()


def test_error_map_is_diverging_and_centred_at_zero():
    import matplotlib as mpl

    figure = state_tile_map_figure(pd.Series({"OH": -0.1, "TX": 0.05}), label="error", diverging=True)
    assert figure.axes[1].get_ylim() == pytest.approx((-0.1, 0.1))
    tiles = _tiles(figure)
    cmap = mpl.colormaps["PuOr"]
    assert tiles["OH"].get_facecolor() == pytest.approx(cmap(0.0))
    assert tiles["TX"].get_facecolor() == pytest.approx(cmap(0.75))
    figure.close()


def test_scatter_has_the_identity_line_and_the_oracle_beside_the_model():
    real = pd.DataFrame({"yes": [0.3, 0.5, 0.7], "no": [0.7, 0.5, 0.3]}, index=["CA", "OH", "WY"])
    model = pd.DataFrame({"yes": [0.4, 0.45, 0.6], "no": [0.6, 0.55, 0.4]}, index=real.index)
    oracle = pd.DataFrame({"yes": [0.32, 0.5, 0.66], "no": [0.68, 0.5, 0.34]}, index=real.index)
    scores = score_states(real, {"model": model, "cell_oracle": oracle, "uniform": uniform_shares(real)})
    figure = state_scatter_figure(scores.options, "yes")
    ax = figure.axes[0]
    identity = [line for line in ax.lines if line.get_gid() == "identity"]
    assert len(identity) == 1
    x, y = identity[0].get_data()
    assert np.allclose(x, y) and x[0] <= 0.3 and x[-1] >= 0.7
    points = {c.get_gid(): c.get_offsets() for c in ax.collections}
    assert set(points) == {"points-model", "points-cell_oracle", "points-uniform"}   # the yardsticks beside the model
    assert np.allclose(points["points-model"], [[0.3, 0.4], [0.5, 0.45], [0.7, 0.6]])
    assert np.allclose(points["points-cell_oracle"][:, 1], [0.32, 0.5, 0.66])
    assert np.allclose(points["points-uniform"][:, 1], 0.5)
    assert sorted(figure.data["source"].unique()) == ["cell_oracle", "model", "uniform"]
    assert "n = 3 states" in figure.caption
    assert legend_problems("scatter", figure.figure) == []                         # colour and marker both differ
    oracle = next(c for c in ax.collections if c.get_gid() == "points-cell_oracle")
    assert oracle.get_facecolors().size == 0 or oracle.get_facecolors()[0][3] == 0  # open circles, as the caption says
    figure.close()


def test_a_colour_bar_of_one_value_has_several_ticks_of_three_significant_digits():
    one_value = pd.Series({"OH": 0.417408528442980042, "TX": 0.417408528442980042})
    for diverging in (False, True):
        figure = state_tile_map_figure(one_value - 0.417408528442980042 * diverging, label="share", diverging=diverging)
        labels = [t.get_text() for t in figure.axes[1].get_yticklabels()]
        assert colorbar_problems("map", figure.figure) == [] and len(labels) >= 2, labels
        figure.close()


def test_group_errors_draws_one_marker_per_group_and_source_and_rejects_bad_tables():
    errors = pd.DataFrame(
        {
            "group": ["party=D", "party=R", "party=I"] * 2,
            "source": ["model"] * 3 + ["cell_oracle"] * 3,
            "abs_error": [0.05, 0.1, 0.2, 0.01, 0.02, 0.03],
            "ci_low": [0.02, 0.07, 0.1, 0.0, 0.01, 0.01],
            "ci_high": [0.08, 0.13, 0.3, 0.02, 0.03, 0.05],
        }
    )
    figure = group_errors_figure(errors)
    ax = figure.axes[0]
    dots = [c for c in ax.collections if c.get_label() in ("model", "cell_oracle")]
    assert len(dots) == 2 and all(len(c.get_offsets()) == 3 for c in dots)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["party=D", "party=R", "party=I"]
    assert np.allclose(sorted(dots[0].get_offsets()[:, 0]), [0.05, 0.1, 0.2])
    figure.close()
    with pytest.raises(InputError, match="^group errors: abs_error: missing column$"):
        group_errors_figure(errors.drop(columns="abs_error"))
    with pytest.raises(InputError, match="unknown state 'Atlantis'"):
        state_tile_map_figure(pd.Series({"Atlantis": 1.0}), label="x")


def test_no_text_of_the_state_figures_leaves_the_saved_canvas(monkeypatch):
    from report_checks import texts_outside_canvas

    real = pd.DataFrame({"yes": [0.3, 0.5, 0.7], "no": [0.7, 0.5, 0.3]}, index=["CA", "OH", "WY"])
    scores = score_states(real, {"a model with a long name | persona_cell": real * 0.9 + 0.05})
    errors = pd.DataFrame({"group": ["race_ethnicity=multiracial or other-race", "party=Republican"],
                           "source": "model", "abs_error": [0.05, 0.1]})
    figures = [state_tile_map_figure(pd.Series({"OH": 0.4, "WY": 0.7}), label="simulated share of yes"),
               state_scatter_figure(scores.options, "yes"), group_errors_figure(errors)]
    for figure in figures:
        assert texts_outside_canvas(monkeypatch, figure.png_bytes) == [], figure.name
        figure.close()
