"""One module per ``minilm`` subcommand; each defines ``register(subparsers)`` and may set
``ORDER`` (its place in ``minilm --help``).

Each ``register`` writes its parser out in full, one ``add_parser``/``add_argument`` call per
option, so that the code reads like the ``--help`` it prints; these declarations look alike from
command to command (and from figure to figure in ``plot``) on purpose."""
