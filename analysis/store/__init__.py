"""Reading a run store: one reader of the run folder's manifest, units and tables as pandas frames."""
