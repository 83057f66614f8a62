"""Subcommands of the ``mirrorcraft`` CLI, in the order ``--help`` lists them."""

from mirrorcraft.commands import rules_cmd

COMMANDS = [rules_cmd]
