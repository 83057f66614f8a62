"""LLM agent configurations: Direct, ReAct (with and without rules), Reflexion, Voyager, XENON, ADAM."""
