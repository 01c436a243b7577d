"""BERT's WordPiece tokenizer (Devlin et al. 2019 §3; google-research/bert ``tokenization.py``).

``text`` → special tokens cut out whole → basic tokenizer (clean, CJK, whitespace, lower-case and
strip accents, punctuation) → greedy longest-match-first WordPiece with ``##`` continuations →
ids. The two steps in the middle are Task 5.1 (``solutions/task05_bert/wordpiece.py``).

Compatible with BERT's and Hugging Face's tokenizers on a real ``vocab.txt``: same character
classes (``bert_chars.py``), same ``strip_accents=None`` rule ("follow ``do_lower_case``"), special
tokens in the text matched exactly. Known differences, all rare:

* Hugging Face's *Python* ``BertTokenizer`` (since 2023) also NFC-normalises the text first;
  Google's code and the Rust tokenizer do not, nor does minilm. With lower-casing this changes
  nothing (accent stripping decomposes anyway), only a cased vocabulary fed decomposed accents.
* The Rust tokenizer (``tokenizers``; ``BertTokenizerFast``) lower-cases one character at a time,
  so a word-final capital sigma becomes ``σ``; Python's ``str.lower`` (BERT, minilm) gives ``ς``.
  Its CJK table starts Extension E at U+2B920 instead of U+2B820, and its Unicode tables are older
  than Python 3.11's, so punctuation added in Unicode 13-14 is not split there.

Checked against ``tokenizers`` 0.23 with all-MiniLM-L6-v2's ``tokenizer.json``: identical ids on
30,000 random strings of Latin, CJK, hangul, emoji, control and whitespace characters, apart from
the cases above.

``decode`` joins ``##`` pieces to the previous token: ``["un", "##aff", "##able", "!"]`` →
``"unaffable !"``. Two clean-ups take spaces out, both off for a tokenizer made here: ``cleanup``, the
WordPiece decoder's (``decoders.py``: piece by piece, ``" !"`` → ``"!"``), and
``clean_up_tokenization_spaces``, transformers' on the whole text (also ``" ' "``, ``" n't"``, …). A
Hugging Face folder read by :meth:`WordPieceTokenizer.load` decodes as transformers 5 does:
``cleanup`` on (BertTokenizer's decoder), ``clean_up_tokenization_spaces`` as its
``tokenizer_config.json`` says.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from autograd import tasks
from autograd.errors import TokenizerError

from .base import BaseTokenizer
from .char import BERT_ROLES, DEFAULT_SPECIALS
from .decoders import clean_up_tokenization, wordpiece_chain
from .wordpiece_trainer import learn_wordpiece_vocab

basic_tokenize = tasks.bind("task05_bert.wordpiece", "basic_tokenize")  # Task 5.1: solutions/task05_bert/wordpiece.py
wordpiece_split = tasks.bind("task05_bert.wordpiece", "wordpiece_split")  # Task 5.1: same file

HF_CLASSES = ("WordPieceTokenizer", "BertTokenizer", "BertTokenizerFast", "DistilBertTokenizer",
              "DistilBertTokenizerFast", "ElectraTokenizer", "ElectraTokenizerFast")


class WordPieceTokenizer(BaseTokenizer):
    """WordPiece over a vocabulary list (id = index). Usually made by :meth:`from_vocab_file`,
    :meth:`load` (also reads a Hugging Face BERT directory) or :meth:`train`."""

    def __init__(self, vocab, *, do_lower_case: bool = True, strip_accents: bool | None = None,
                 max_input_chars_per_word: int = 100, roles: dict[str, str] | None = None,
                 additional_special_tokens=(), cleanup: bool = False, clean_up_tokenization_spaces: bool = False):
        vocab = list(vocab)
        if roles is None:  # BERT's names, where the vocabulary has them
            present = set(vocab)
            roles = {role: tok for tok, role in BERT_ROLES.items() if tok in present}
        if "unk_token" not in roles:
            raise TokenizerError("WordPieceTokenizer: the vocabulary needs an unknown token "
                                 "(BERT's '[UNK]'): a word that cannot be cut into pieces becomes it")
        super().__init__(vocab, roles=roles, special_tokens=additional_special_tokens)
        self.do_lower_case = bool(do_lower_case)
        self.strip_accents = strip_accents
        self.max_input_chars_per_word = int(max_input_chars_per_word)
        self.unk_token = roles["unk_token"]
        self.cleanup, self.clean_up_tokenization_spaces = bool(cleanup), bool(clean_up_tokenization_spaces)

    def __repr__(self) -> str:
        return (f"WordPieceTokenizer(vocab_size={self.vocab_size}, do_lower_case={self.do_lower_case}, "
                f"strip_accents={self.strip_accents})")

    # ---- text ↔ tokens ---------------------------------------------------------------------
    def basic_tokenize(self, text: str) -> list[str]:
        """The words of ``text`` before WordPiece (Task 5.1's basic tokenizer with this tokenizer's
        options); special-token strings are kept whole."""
        words = []
        for piece, is_special in self.split_on_special_tokens(text):
            words.extend([piece] if is_special else
                         basic_tokenize(piece, do_lower_case=self.do_lower_case, strip_accents=self.strip_accents))
        return words

    def _tokenize_text(self, text: str) -> list[str]:
        tokens = []
        for word in basic_tokenize(text, do_lower_case=self.do_lower_case, strip_accents=self.strip_accents):
            tokens.extend(wordpiece_split(word, self._token_to_id, unk_token=self.unk_token,
                                          max_chars=self.max_input_chars_per_word))
        return tokens

    def _tokens_to_text(self, tokens: list[str]) -> str:
        return "".join(wordpiece_chain(tokens, "##", self.cleanup))

    def decode(self, ids, skip_special_tokens: bool = False, clean_up_tokenization_spaces: bool | None = None) -> str:
        """Tokens joined by spaces, ``##`` pieces glued to the previous token. With
        ``clean_up_tokenization_spaces`` (None: the tokenizer's own setting) the spaces before
        ``. , ! ?`` and English contractions go."""
        text = super().decode(ids, skip_special_tokens=skip_special_tokens)
        if clean_up_tokenization_spaces is None:
            clean_up_tokenization_spaces = self.clean_up_tokenization_spaces
        return clean_up_tokenization(text) if clean_up_tokenization_spaces else text

    # ---- building a vocabulary ---------------------------------------------------------------
    @classmethod
    def train(cls, texts, vocab_size: int, *, do_lower_case: bool = True, strip_accents: bool | None = None,
              min_frequency: int = 2, special_tokens=DEFAULT_SPECIALS) -> "WordPieceTokenizer":
        """Learn a vocabulary of (at most, alphabet permitting) ``vocab_size`` tokens from ``texts``.

        The special tokens take ids 0.. in the order given (``[PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3,
        [MASK]=4``), then the sorted alphabet, then merged pieces in the order learned. The rule
        (BPE merges on ``##`` symbols, ties by sorted pair) is in ``wordpiece_trainer.py``: the merges
        are learned by Task 6.2's ``train_merges`` slot, so training a vocabulary needs that task.
        Deterministic: the same texts give the same vocabulary.
        """
        if isinstance(texts, str):
            texts = [texts]
        special_tokens = tuple(special_tokens)
        probe = cls.with_vocab(list(special_tokens), do_lower_case=do_lower_case, strip_accents=strip_accents,
                               special_tokens=special_tokens)
        counts = Counter()
        for text in texts:
            counts.update(w for w in probe.basic_tokenize(text) if w not in probe.special_tokens)
        vocab = learn_wordpiece_vocab(counts, vocab_size, special_tokens, min_frequency=min_frequency)
        return cls.with_vocab(vocab, do_lower_case=do_lower_case, strip_accents=strip_accents,
                              special_tokens=special_tokens)

    @classmethod
    def with_vocab(cls, vocab, *, do_lower_case: bool = True, strip_accents: bool | None = None,
                   special_tokens=DEFAULT_SPECIALS) -> "WordPieceTokenizer":
        """A tokenizer over ``vocab`` (a list of tokens, id = index) set up as :meth:`train` sets up the
        one it learns: the special tokens' roles and case handling."""
        special_tokens = tuple(special_tokens)
        roles = {role: tok for tok, role in BERT_ROLES.items() if tok in special_tokens}
        return cls(list(vocab), do_lower_case=do_lower_case, strip_accents=strip_accents, roles=roles,
                   additional_special_tokens=special_tokens)

    # ---- files -----------------------------------------------------------------------------
    @classmethod
    def from_vocab_file(cls, path, do_lower_case: bool = True, strip_accents: bool | None = None,
                        **kwargs) -> "WordPieceTokenizer":
        """Read a BERT ``vocab.txt``: one token per line, the id is the line index (from 0)."""
        return cls(read_vocab_txt(path), do_lower_case=do_lower_case, strip_accents=strip_accents, **kwargs)

    def _config(self) -> dict:
        return {**super()._config(), "do_lower_case": self.do_lower_case, "strip_accents": self.strip_accents,
                "max_input_chars_per_word": self.max_input_chars_per_word, "decoder_cleanup": self.cleanup,
                "clean_up_tokenization_spaces": self.clean_up_tokenization_spaces}

    def save(self, directory) -> Path:
        """Write ``vocab.txt`` and ``tokenizer_config.json`` (Hugging Face's keys) into ``directory``."""
        directory = Path(directory)
        bad = [t for t in self._id_to_token if "\n" in t or "\r" in t]
        if bad:
            raise TokenizerError(f"WordPieceTokenizer.save: vocab.txt holds one token per line, but "
                                 f"{bad[0]!r} contains a line break")
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "vocab.txt").write_text("".join(t + "\n" for t in self._id_to_token), encoding="utf-8")
        self._write_config(directory)
        return directory

    @classmethod
    def load(cls, directory) -> "WordPieceTokenizer":
        """Read ``vocab.txt`` and, if present, ``tokenizer_config.json`` from ``directory`` (minilm's
        own, or a Hugging Face BERT model directory: ``do_lower_case``, ``strip_accents``, roles, and
        decoding as transformers' BertTokenizer: ``cleanup`` on)."""
        directory = Path(directory)
        config = cls.read_config(directory, HF_CLASSES)
        vocab = read_vocab_txt(directory / "vocab.txt")
        defaults = {role: tok for tok, role in BERT_ROLES.items()}
        roles = cls.roles_from_config(config, defaults, set(vocab))
        extra = [t for t in config.get("additional_special_tokens") or [] if t in set(vocab)]
        own = config.get("tokenizer_class") == "WordPieceTokenizer"      # minilm's save(): its own settings
        return cls(vocab, do_lower_case=config.get("do_lower_case", True),
                   strip_accents=config.get("strip_accents"), roles=roles, additional_special_tokens=extra,
                   max_input_chars_per_word=config.get("max_input_chars_per_word", 100),
                   cleanup=config.get("decoder_cleanup", not own),
                   clean_up_tokenization_spaces=config.get("clean_up_tokenization_spaces", False))


def read_vocab_txt(path) -> list[str]:
    """Lines of a ``vocab.txt`` as read by BERT / Hugging Face (universal newlines, the final line
    break dropped, every other character kept)."""
    try:
        with open(path, encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f]
    except FileNotFoundError:
        raise TokenizerError(f"WordPieceTokenizer: vocabulary file {path} does not exist") from None
    except UnicodeDecodeError as e:
        raise TokenizerError(f"WordPieceTokenizer: {path} is not UTF-8 text: {e}") from None

