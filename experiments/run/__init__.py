"""Running a frozen study: runner, executors, the trial pipeline, the run manifest and the trial store."""
