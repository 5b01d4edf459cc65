"""pvsst.sim: the LLM gateway, platform state, feed policies, agents, the Mesa model and the trial writer."""
