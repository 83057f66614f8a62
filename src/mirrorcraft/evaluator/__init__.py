"""What the server knows and the agent never sees: milestones and rule encounters."""
