"""The MineEvolve paper's baselines on our semantic-skill body: DEPS, JARVIS-1, Optimus-1, Optimus-2.

Each keeps its defining mechanism as an LLM configuration over the same thirteen
skills, observation block and limits as every other configuration (see
docs/mineevolve.md, "Baselines"). DEPS, JARVIS-1 and Optimus-1 run their plans
through the shared subgoal executor (``executor.py``), the counterpart of the
paper's shared low-level policy; Optimus-2 keeps its own per-action policy.
"""
