"""Experiments: specs -> episodes, the episode loop, executors and the results store."""
