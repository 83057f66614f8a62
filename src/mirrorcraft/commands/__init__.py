"""Subcommands of the ``mirrorcraft`` CLI, in the order ``--help`` lists them."""

from mirrorcraft.commands import play_cmd, rules_cmd

COMMANDS = [play_cmd, rules_cmd]
