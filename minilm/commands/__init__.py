"""One module per ``minilm`` subcommand; each defines ``register(subparsers)`` and may set
``ORDER`` (its place in ``minilm --help``).

Each ``register`` writes its parser out in full, one ``add_parser``/``add_argument`` call per
option, so that the code reads like the ``--help`` it prints. A long description may stand above
``register`` as prose in a triple-quoted ``DESCRIPTION`` (argparse re-wraps it), so that the parser
itself stays a list of options."""
