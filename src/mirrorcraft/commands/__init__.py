"""Subcommands of the ``mirrorcraft`` CLI, in the order ``--help`` lists them."""

from mirrorcraft.commands import play_cmd, rules_cmd, run_cmd

COMMANDS = [run_cmd, play_cmd, rules_cmd]
