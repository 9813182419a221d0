"""The commands: each module is one `bench` subcommand with `run(args, ui) -> int`."""
