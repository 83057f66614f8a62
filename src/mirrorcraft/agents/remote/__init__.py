"""Agents in another process: the remote agent protocol (``docs/remote_agent.md``), its
message models and generated JSON Schemas, an HTTP client, and the agent that speaks it."""
