"""Cell runs: post-stratified estimates from cell answers, scored by state and group against the real survey."""
