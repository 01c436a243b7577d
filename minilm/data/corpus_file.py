"""Reading a user's text file as documents of sentences (``minilm train ... --corpus FILE``).

The format, which BERT's ``create_pretraining_data.py`` also uses:

* the file is UTF-8 text (a leading byte-order mark is allowed);
* **documents** are separated by one or more blank lines (lines of only whitespace count as blank);
* inside a document, each line holds one sentence or several: a line is split after every
  ``.``, ``!`` or ``?`` that is followed by whitespace, so ``"It rains. We stay in."`` gives two
  sentences and ``"the dog runs . the cat sleeps ."`` too. Leading/trailing spaces are stripped;
  the words themselves are kept as they are (tokenizers lower-case if they want to).

A file whose name ends in ``.gz`` is read through gzip. The word ``real`` (``--corpus real``) names
the English text that ships with minilm: the Jargon File 4.4.7 (public domain), cleaned to running
prose by ``tools/make_real_corpus.py``, 1.27 MB, one lexicon entry or chapter section a document
(see ``minilm/data/real/README.md``). A file called ``real`` is ``./real``.

``write_corpus`` writes the same format (one sentence per line), so ``read_corpus`` reads it back.
"""
from __future__ import annotations

import gzip
import os
import re
import zlib
from typing import Callable

from autograd.errors import MiniLMError

__all__ = ["REAL_CORPUS", "corpus_path", "read_corpus", "write_corpus", "split_sentences", "encode_documents"]

REAL_CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real", "jargon-4.4.7.txt.gz")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_sentences(line: str) -> list[str]:
    """Split one line after each ``.``/``!``/``?`` followed by whitespace; drop empty pieces."""
    return [s.strip() for s in _SENTENCE_END.split(line.strip()) if s.strip()]


def corpus_path(corpus) -> str:
    """The file that ``--corpus`` names: ``"real"`` is the shipped text (:data:`REAL_CORPUS`), anything
    else a path."""
    return REAL_CORPUS if corpus == "real" else os.fspath(corpus)


def read_corpus(path) -> list[list[str]]:
    """The documents of the text file at ``path`` (``"real"``: the shipped corpus; ``*.gz``: gzip),
    each a list of sentence strings.

    Raises ``MiniLMError`` naming the path when the file is missing or unreadable, is not gzip
    although named ``.gz``, is not UTF-8 (with the byte offset of the first bad byte), or holds no
    text at all.
    """
    path = corpus_path(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise MiniLMError(f"read_corpus: no such file: {path!r}") from None
    except IsADirectoryError:
        raise MiniLMError(f"read_corpus: {path!r} is a directory, expected a text file") from None
    except OSError as e:
        raise MiniLMError(f"read_corpus: cannot read {path!r}: {e.strerror or e}") from None
    if path.endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:   # gzip.BadGzipFile is an OSError
            raise MiniLMError(f"read_corpus: {path!r} is named .gz but is not a whole gzip file: {e}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        # e.start counts in the bytes after a BOM, if there was one
        offset = e.start + (3 if raw.startswith(b"\xef\xbb\xbf") else 0)
        raise MiniLMError(f"read_corpus: {path!r} is not UTF-8 text: byte 0x{raw[offset]:02x} at "
                          f"offset {offset} cannot be decoded ({e.reason}); save the file as UTF-8"
                          ) from None
    documents: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            if current:
                documents.append(current)
                current = []
            continue
        current.extend(split_sentences(line))
    if current:
        documents.append(current)
    if not documents:
        raise MiniLMError(f"read_corpus: {path!r} holds no text ({len(raw)} bytes, all whitespace): "
                          "expected sentences, with a blank line between documents")
    return documents


def write_corpus(documents: list[list[str]], path) -> None:
    """Write ``documents`` one sentence per line with a blank line between documents (UTF-8)."""
    if not documents or not any(documents):
        raise MiniLMError("write_corpus: no sentences to write")
    for d, doc in enumerate(documents):
        for s in doc:
            if "\n" in s or not s.strip():
                raise MiniLMError(f"write_corpus: document {d} has sentence {s!r}: expected a "
                                  "non-empty sentence without line breaks")
    text = "\n\n".join("\n".join(s.strip() for s in doc) for doc in documents if doc) + "\n"
    with open(os.fspath(path), "w", encoding="utf-8") as f:
        f.write(text)


def encode_documents(documents: list[list[str]], encode: Callable[[str], list[int]]) -> list[list[list[int]]]:
    """Tokenise every sentence: documents of sentences of strings -> documents of sentences of ids.

    ``encode`` is a tokenizer's ``str -> list[int]`` (special tokens are the caller's business).
    Sentences that encode to nothing are dropped, and so are documents left empty.
    """
    out = []
    for doc in documents:
        encoded = [list(encode(s)) for s in doc]
        encoded = [s for s in encoded if s]
        if encoded:
            out.append(encoded)
    return out
