"""Commands that live in their own module; `cli.LAZY_COMMANDS` imports them when used."""
