"""Subcommands of the ``mirrorcraft`` CLI, in the order ``--help`` lists them."""

from mirrorcraft.commands import (
    agents_cmd,
    analyze_cmd,
    controls_cmd,
    design_cmd,
    export_cmd,
    play_cmd,
    report_cmd,
    rules_cmd,
    run_cmd,
    server_cmd,
    suites_cmd,
)

COMMANDS = [
    run_cmd,
    analyze_cmd,
    report_cmd,
    export_cmd,
    play_cmd,
    suites_cmd,
    agents_cmd,
    controls_cmd,
    design_cmd,
    rules_cmd,
    server_cmd,
]
