"""Paper figures (matplotlib, Agg): one module per figure family, one style (:mod:`pvsst.analysis.figures.style`).

Every function returns a :class:`~pvsst.analysis.figures.style.PaperFigure` whose ``data`` is the plotted table
and whose ``caption`` states n and the CI method.
"""
from pvsst.analysis.figures.decomposition import decomposition_figure
from pvsst.analysis.figures.forest import contrast_forest_figure, contrasts_overview_figure
from pvsst.analysis.figures.network import homophily_null_figure, network_figure
from pvsst.analysis.figures.similarity import similarity_by_round_figure
from pvsst.analysis.figures.stance import stance_trajectories_figure, survival_by_arm_figure
from pvsst.analysis.figures.style import PaperFigure
from pvsst.analysis.figures.survey.fidelity import distribution_by_group_figure, fidelity_by_question_figure

__all__ = ["PaperFigure", "contrast_forest_figure", "contrasts_overview_figure", "distribution_by_group_figure",
           "decomposition_figure", "fidelity_by_question_figure", "homophily_null_figure", "network_figure",
           "similarity_by_round_figure",
           "stance_trajectories_figure", "survival_by_arm_figure"]
