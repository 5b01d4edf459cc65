"""The preregistration report: plan beside results, verdicts, deviations, audits, figures (MD + HTML)."""
from analysis.report.build import ReportResult, build_run_report, build_table_report

__all__ = ["ReportResult", "build_run_report", "build_table_report"]
