"""The survey report: its tables, its cell-run and audit sections, and the report build."""
