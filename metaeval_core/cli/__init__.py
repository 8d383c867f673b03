"""The command line: ``metaeval <subcommand>`` and ``python -m metaeval_core``."""
