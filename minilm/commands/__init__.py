"""One module per ``minilm`` subcommand; each defines ``register(subparsers)`` and may set
``ORDER`` (its place in ``minilm --help``)."""
