"""The ``minilm`` command line.

Each subcommand lives in its own module under ``minilm/commands/`` and provides
``register(subparsers)`` (adds its parser and sets ``func``); this file only collects them, so a
new command is one new file. Global options: ``--impl`` chooses whose task code runs
(``solutions`` or ``exercises``), ``--seed`` is passed to every command.

Conventions for commands: progress and tables go to stderr/stdout as text; with ``--json`` a command
prints exactly one JSON object on stdout and sends everything else to stderr.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import minilm.commands
from autograd import tasks
from autograd.errors import MiniLMError
from minilm.recipes.slots import describe_missing, missing_slots

DESCRIPTION = """\
minilm — the Transformer pre-training families (GPT, BERT, RoBERTa, ELECTRA, XLNet, T5, BART,
distillation) built from scratch in NumPy. Every command takes --seed; commands that report numbers
take --json (one JSON object on stdout, progress on stderr).

Start with:  minilm demo          (the seed experiment: GPT and BERT objectives on six sentences)
Students:    minilm grade         (grade your exercises/ against the graded tests)
"""


def _command_modules():
    mods = []
    for info in pkgutil.iter_modules(minilm.commands.__path__):
        if not info.name.startswith("_"):
            mods.append(importlib.import_module(f"minilm.commands.{info.name}"))
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 50), m.__name__))


class ExactParser(argparse.ArgumentParser):
    """An option must be spelt out: argparse would otherwise take ``--checkpoint`` for
    ``--checkpoint-every`` (a prefix of one option), and a typo would change a setting silently.
    Every sub-command's parser is of this class too (``add_subparsers`` copies it)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser = ExactParser(prog="minilm", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--impl", choices=tasks.IMPLEMENTATIONS, default=None,
                        help="whose task code runs: solutions (reference; default where it exists) or "
                             "exercises (yours). MINILM_IMPL sets the default.")
    parser.add_argument("--version", action="version", version=f"minilm {minilm.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _command_modules():
        mod.register(sub)
    return parser


def add_common(parser: argparse.ArgumentParser, json: bool = True, seed: int = 0) -> None:
    """The options every command shares: --seed, and --json where the command reports numbers."""
    parser.add_argument("--seed", type=int, default=seed, help=f"random seed (default {seed})")
    if json:
        parser.add_argument("--json", action="store_true",
                            help="print one JSON object on stdout (progress goes to stderr)")


def add_refused_corpus(parser: argparse.ArgumentParser, what: str, reason: str) -> None:
    """``--corpus`` for a command that reads no text (``what``: "family", "experiment"): shown in
    --help with ``reason``, and answered with it, as an argparse error, when given."""
    class Refused(argparse.Action):
        def __call__(self, parser, namespace, value, option_string=None):
            parser.error(f"--corpus {value}: not taken by this {what}. {reason}")
    parser.add_argument("--corpus", metavar="TEXT", action=Refused, help="not taken here: " + reason.replace("%", "%%"))


def _missing_hint() -> str:
    """What to do about unfinished slots; a student release has no solutions/ to fall back on."""
    if tasks.solutions_available():
        return "(fill them in under exercises/, or run the reference with --impl solutions)"
    return "(fill them in under exercises/; `minilm grade` shows how far each task is)"


def _report_missing(args, header: str | None = None) -> bool:
    """Print every still-stubbed slot on the command's path (minilm/recipes/slots.py); True if any."""
    missing = missing_slots(args)
    if not missing:
        return False
    what = " ".join(str(getattr(args, k)) for k in ("command", "family", "experiment") if getattr(args, k, None))
    header = header or f"{len(missing)} task slot(s) on the path of `minilm {what}` are not implemented yet:"
    print(f"minilm {args.command}: {header}\n{describe_missing(missing)}\n{_missing_hint()}", file=sys.stderr)
    return True


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.impl:
            tasks.set_impl(args.impl)
        if tasks.get_impl() == "exercises" and _report_missing(args):
            return 1
        result = args.func(args)
        return int(result or 0)
    except MiniLMError as e:
        print(f"minilm {args.command}: error: {e}", file=sys.stderr)
        return 1
    except NotImplementedError as e:
        print(f"minilm {args.command}: a task slot is not implemented yet: {e}", file=sys.stderr)
        if not _report_missing(args, header="every unfinished slot this command runs:"):
            print(_missing_hint(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
