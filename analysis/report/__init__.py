"""The preregistration report: plan beside results, verdicts, deviations, the run's checks, figures (MD + HTML)."""
from pvsst.analysis.report.build import ReportResult, build_run_report, build_table_report
from pvsst.analysis.report.survey.build import build_survey_report

__all__ = ["ReportResult", "build_run_report", "build_survey_report", "build_table_report"]
