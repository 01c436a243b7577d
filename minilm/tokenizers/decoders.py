"""Tokens → text as transformers 5 decodes: the ``decoder`` of a ``tokenizer.json``, then the
Python-level clean-up.

``tokenizer.decode(ids)`` in transformers 5 is ``tokenizers``' ``Tokenizer.decode`` (the ids' tokens,
special ones left out with ``skip_special_tokens``, through the file's ``decoder``), then
``PreTrainedTokenizerBase.clean_up_tokenization`` when ``clean_up_tokenization_spaces`` is set —
False unless ``tokenizer_config.json`` or the tokenizer class says so, and skipped for a BPE model
(``TokenizersBackend._decode``). Each decoder maps the list of tokens to a list of strings
(``decode_chain`` in ``tokenizers/src/decoders``), a Sequence runs them in turn, and the text is
their concatenation:

* **WordPiece** (``prefix``, ``cleanup``): every token but the first gets a space in front, unless
  it starts with the prefix (``##``), which is dropped; with ``cleanup`` (BERT's default) each piece
  then loses the spaces of ``TOKEN_CLEANUP`` — one piece at a time, so ``" ."`` goes but ``" ' "``
  (three pieces' worth) never matches;
* **Metaspace** (``replacement``, ``prepend_scheme``): ``▁`` → space, except in the first token,
  where every ``▁`` is dropped (unless ``prepend_scheme`` is ``never``); the last space stays;
* **ByteLevel**: the byte-to-character map of byte-level BPE read backwards, UTF-8 with
  replacement (the caller's ``ByteLevelBPETokenizer`` does it, Task 6.2's map).
"""
from __future__ import annotations

from autograd.errors import TokenizerError

# transformers' PreTrainedTokenizerBase.clean_up_tokenization, on the whole text
CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
           (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))
# tokenizers' WordPiece decoder ``cleanup`` (decoders/wordpiece.rs), on each piece: one rule more
TOKEN_CLEANUP = CLEANUP[:7] + ((" do not", " don't"),) + CLEANUP[7:]


def clean_up_tokenization(text: str, rules=CLEANUP) -> str:
    """Spaces a word-level decode leaves before punctuation and English contractions, removed."""
    for old, new in rules:
        text = text.replace(old, new)
    return text


def wordpiece_chain(tokens: list[str], prefix: str = "##", cleanup: bool = True) -> list[str]:
    out = []
    for i, tok in enumerate(tokens):
        if i:
            tok = tok[len(prefix):] if tok.startswith(prefix) else " " + tok
        out.append(clean_up_tokenization(tok, TOKEN_CLEANUP) if cleanup else tok)
    return out


def metaspace_chain(tokens: list[str], replacement: str = "\u2581", prepend: bool = True) -> list[str]:
    return [tok.replace(replacement, "" if i == 0 and prepend else " ") for i, tok in enumerate(tokens)]


def run_decoder(spec: dict | None, tokens: list[str], byte_level=None, where="tokenizer.json") -> str:
    """The text of ``tokens`` through the decoder ``spec`` (a ``tokenizer.json`` ``decoder`` entry;
    None: the tokens joined by spaces, as ``tokenizers`` does without one). ``byte_level`` turns
    byte-level tokens into text (needed by a ByteLevel step)."""
    if spec is None:
        return " ".join(tokens)
    steps = spec["decoders"] if spec.get("type") == "Sequence" else [spec]
    for step in steps:
        kind = step.get("type")
        if kind == "WordPiece":
            tokens = wordpiece_chain(tokens, step.get("prefix", "##"), step.get("cleanup", True))
        elif kind == "Metaspace":
            scheme = step.get("prepend_scheme", "always" if step.get("add_prefix_space", True) else "never")
            tokens = metaspace_chain(tokens, step.get("replacement", "\u2581"), scheme != "never")
        elif kind == "ByteLevel" and byte_level is not None:
            tokens = [byte_level(tokens)]
        else:
            raise TokenizerError(f"{where}: decoder {kind!r} is not one minilm reads (WordPiece, Metaspace, "
                                 "ByteLevel after a byte-level BPE, Sequence); encoding works, decoding does not")
    return "".join(tokens)
