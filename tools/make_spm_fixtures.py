"""Build tests/data/spm/: small SentencePiece models trained here, and the ids ``sentencepiece`` gives.

    pip install sentencepiece                       # this tool only; the tests read the files without it
    python tools/make_spm_fixtures.py [--out tests/data/spm] [--check]

The text is real: docstrings of the Python standard library's modules (``/usr/lib/python3*/*.py``,
collected with ``ast``, files in sorted order), the first ``N_LINES`` distinct non-blank lines for
the comparison and every line of the first ``N_TRAIN_FILES`` files for training, plus ``HARD``
cases (CJK, emoji and ZWJ sequences, combining marks, whitespace runs and tabs, the empty string,
leading / trailing spaces, characters the models never saw, user-defined pieces, a literal ▁).

Three models, each under 10 KB, to cover the switches of the ``.model`` file:

* ``unigram.model``: Unigram, 400 pieces, normalised by a small rule table (``RULES``: full-width
  forms, ligatures, circled digits, ``e`` + U+0301 → ``é``; compiled into a ``precompiled_charsmap``
  of a few KB, where nmt_nfkc's is 240 KB), user-defined ``<sep>`` and ``<cls>``, default whitespace
  handling;
* ``bpe.model``: BPE, 520 pieces with ``byte_fallback`` (256 of them bytes; the rarest characters left to
  them by a 99.95 % character coverage), no normalisation rules,
  ``remove_extra_whitespaces`` off (runs of spaces kept), user-defined ``<sep>``;
* ``unigram_raw.model``: Unigram, 300 pieces, identity normaliser, ``add_dummy_prefix`` and
  ``remove_extra_whitespaces`` off.

``expected.json`` holds the texts and, per model, ``sp.encode(text)`` for each. ``--check`` writes
nothing: it encodes the stored texts with ``sentencepiece`` and the stored models and compares
(what tests/models/test_sentencepiece_model.py runs when ``sentencepiece`` is installed). Training
is deterministic for a given ``sentencepiece`` version (here 0.2.3, one thread).
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import glob
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "spm"
N_LINES = 520
N_TRAIN_FILES = 60
HARD = ["", " ", "   ", "   leading and trailing   ", "tabs\tand\nnewlines\r\n", "many     spaces    between  x",
        "東京都 北京 서울", "emoji 🙂👍🏽 family 👨\u200d👩\u200d👧 🇹🇼", "e\u0301 combining n\u0303 a\u0308 ḱ\u0323",
        "Ünïcödé ÀÉÎ", "ﬁne ① ｆｕｌｌ　ｗｉｄｔｈ ™ Å", "ｈｅｌｌｏ，　ｗｏｒｌｄ！", "x" * 150, "1234567890 3.14159 1e-5",
        "unknown: Ω ∮ ☃ 𝔘 ЖЖЖ", "<sep> user <cls> defined<sep>x", "\u00a0nbsp\u00a0 and\u2003em", "▁ literal ▁▁ meta",
        "a\u200db", " \t \n ", "x  ", "  x"]
# (sources, target) as code points: SentencePiece's normalization_rule_tsv
RULES = ([([0xFF01 + k], [0x21 + k]) for k in range(94)] + [([c], [0x20]) for c in (0x3000, 0xA0, 0x09, 0x0A, 0x0D)]
         + [([0xFB01], [0x66, 0x69]), ([0xFB02], [0x66, 0x6C]), ([0x2122], [0x54, 0x4D]), ([0x212B], [0xC5])]
         + [([0x2460 + k], [0x31 + k]) for k in range(9)] + [([0x65, 0x301], [0xE9]), ([0x61, 0x308], [0xE4])])
MODELS = {
    "unigram": dict(model_type="unigram", vocab_size=400, user_defined_symbols=["<sep>", "<cls>"]),
    "bpe": dict(model_type="bpe", vocab_size=520, byte_fallback=True, character_coverage=0.9995,
                normalization_rule_name="identity",
                remove_extra_whitespaces=False, user_defined_symbols=["<sep>"]),
    "unigram_raw": dict(model_type="unigram", vocab_size=300, normalization_rule_name="identity",
                        add_dummy_prefix=False, remove_extra_whitespaces=False),
}


def stdlib_files() -> list[str]:
    return sorted(glob.glob("/usr/lib/python3*/*.py"))


def docstrings(path: str) -> list[str]:
    """The non-blank lines of every docstring of one file (module, classes, functions)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            out += [line for line in (doc or "").splitlines() if line.strip()]
    return out


def texts_and_corpus() -> tuple[list[str], list[str]]:
    files = stdlib_files()
    if not files:
        raise SystemExit("no /usr/lib/python3*/*.py here: the fixtures' text is the standard library's docstrings")
    lines, corpus = [], []
    for k, path in enumerate(files):
        found = docstrings(path)
        lines += found
        if k < N_TRAIN_FILES:
            corpus += found
    reserved = ("<s>", "</s>", "<unk>", "<pad>")     # special-token strings: transformers would cut them out
    lines = [t for t in dict.fromkeys(lines) if not any(r in t for r in reserved)]
    unseen = [h for h in HARD if h.startswith("unknown")]       # characters no model has a piece for
    return lines[:N_LINES] + HARD, corpus + [h for h in HARD if h.strip() and h not in unseen]


def train(name: str, corpus: list[str], tmp: Path) -> bytes:
    import sentencepiece as spm
    (tmp / "corpus.txt").write_text("\n".join(line.replace("\n", " ") for line in corpus), encoding="utf-8")
    rules = tmp / "rules.tsv"
    rules.write_text("".join(" ".join(f"{c:X}" for c in a) + "\t" + " ".join(f"{c:X}" for c in b) + "\n"
                             for a, b in RULES), encoding="utf-8")
    options = {"character_coverage": 1.0, **MODELS[name]}
    if "normalization_rule_name" not in options:
        options["normalization_rule_tsv"] = rules.name
    with contextlib.chdir(tmp):     # relative names: the model records them, and a temporary path would vary
        spm.SentencePieceTrainer.train(input="corpus.txt", model_prefix=name, num_threads=1, minloglevel=2,
                                       pad_id=3, hard_vocab_limit=True, **options)
    return (tmp / f"{name}.model").read_bytes()


def encode_all(model_bytes: bytes, texts: list[str]) -> list[list[int]]:
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_proto=model_bytes)
    return [sp.encode(t) for t in texts]


def write(out: Path) -> None:
    texts, corpus = texts_and_corpus()
    out.mkdir(parents=True, exist_ok=True)
    expected = {"texts": texts}
    with tempfile.TemporaryDirectory() as tmp:
        for name in MODELS:
            raw = train(name, corpus, Path(tmp))
            (out / f"{name}.model").write_bytes(raw)
            expected[name] = encode_all(raw, texts)
            print(f"{name}.model: {len(raw)} bytes")
    lines = [json.dumps({"texts": texts}, ensure_ascii=False)[:-1]]
    for name in MODELS:             # one line per model, the ids without spaces
        rows = ",".join(json.dumps(row, separators=(",", ":")) for row in expected[name])
        lines.append(f', "{name}": [{rows}]')
    (out / "expected.json").write_text("\n".join(lines) + "}\n", encoding="utf-8")
    print(f"expected.json: {len(texts)} texts, {(out / 'expected.json').stat().st_size} bytes")


def check(out: Path) -> dict[str, int]:
    """``{model: texts whose ids differ}`` between the stored ids and ``sentencepiece`` now."""
    expected = json.loads((out / "expected.json").read_text(encoding="utf-8"))
    return {name: sum(a != b for a, b in zip(encode_all((out / f"{name}.model").read_bytes(), expected["texts"]),
                                              expected[name])) for name in MODELS}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="compare the stored ids with sentencepiece's")
    args = ap.parse_args(argv)
    if args.check:
        bad = check(args.out)
        print(", ".join(f"{k}: {v} texts differ" for k, v in bad.items()))
        return 1 if any(bad.values()) else 0
    write(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
