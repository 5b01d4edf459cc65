"""One trial of the engine: its configuration (the single definition of every protocol parameter) and its run."""
