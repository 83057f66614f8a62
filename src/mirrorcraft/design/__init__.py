"""The construction workflow: designing new rule suites and biome specs (paper 3.2, appendix F).

A seeded sampler or an LLM designer proposes a complete spec; the static report
(``mirror_report`` / ``biome_report``) audits it against a catalog generated from
our data (``mirror_catalog`` / ``biome_catalog``); an independent LLM judge
reviews the spec and the report (``contracts``); the loop (``loop``) repeats for
a bounded number of rounds, and the deterministic controls decide whether an
accepted candidate is usable. ``run`` ties it together for the CLI
(``mirrorcraft design``); ``docs/design.md`` describes the contracts.
"""
