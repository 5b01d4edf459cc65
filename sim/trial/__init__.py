"""One trial of the engine: its configuration (the single definition of every trial setting) and its run."""
