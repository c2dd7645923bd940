"""The downstream project under ``project/`` is a user's suite that the tests of this directory run
in a pytester directory (plain, upstream and shadow mode); the outer suite never collects it."""

collect_ignore = ["project"]
