"""Agents: the Agent protocol, reference agents (no LLM) and the LLM configurations."""
