#!/usr/bin/env python3
"""Write the capstones' ready-made vocabularies (tests/data/capstone/): ``python tools/make_capstone_vocab.py``.

Each is what ``WordPieceTokenizer.train`` gives, on the reference, for the text its capstone trains
on (``tests/capstone_vocab.py`` says why the capstones do not train their own). ``--check`` compares
instead of writing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograd import tasks  # noqa: E402
from tests import capstone_vocab  # noqa: E402


def vocabularies() -> dict[str, list[str]]:
    """{name: tokens} trained now, on the reference."""
    from minilm.recipes.bert import BertRecipe
    from tests.graded import test_task04_capstone as gpt, test_task05_capstone as bert
    with tasks.use("solutions"):
        toks = {"gpt": gpt.train_vocabulary(), "bert": BertRecipe(bert.CONFIG).tokenizer}
    return {name: tok.convert_ids_to_tokens(range(tok.vocab_size)) for name, tok in toks.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that the files are current")
    args = ap.parse_args(argv)
    stale = []
    for name, tokens in vocabularies().items():
        path = capstone_vocab.FOLDER / f"{name}.vocab.txt"
        text = "".join(t + "\n" for t in tokens)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)} ({len(tokens)} tokens)")
    if stale:
        print("out of date (run python tools/make_capstone_vocab.py): " + ", ".join(stale), file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
