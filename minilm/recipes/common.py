"""What the recipes share: the corpus (synthetic or ``--corpus FILE``) and its train/held-out split."""
from __future__ import annotations

import numpy as np

from minilm.data import read_corpus, synthetic_corpus, train_val_split


def add_corpus_arguments(p, n_docs: int = 400) -> None:
    p.add_argument("--corpus", help="a UTF-8 text file: documents separated by blank lines, one sentence "
                                    "per line (default: the synthetic corpus)")
    p.add_argument("--docs", type=int, default=n_docs, help=f"synthetic documents to generate (default {n_docs})")


def load_documents(args) -> tuple[list, list]:
    """(train documents, held-out documents), each a list of documents of sentence strings."""
    rng = np.random.default_rng([args.seed, 12345])
    if getattr(args, "corpus", None):
        docs = read_corpus(args.corpus)
    else:
        docs = synthetic_corpus(args.docs, rng=rng)
    if len(docs) < 4:
        from autograd.errors import MiniLMError
        raise MiniLMError(f"the corpus has {len(docs)} document(s); at least 4 are needed (2 held out: "
                          f"next-sentence pairs draw B from another document)")
    return train_val_split(docs, val_fraction=max(0.1, 2 / len(docs)), rng=rng)


def texts(docs) -> list[str]:
    return [s for d in docs for s in d]


def stream(docs, tok) -> np.ndarray:
    """Every document's sentences encoded and joined, a [SEP] after each document."""
    ids = []
    for doc in docs:
        for sentence in doc:
            ids.extend(tok.encode(sentence))
        ids.append(tok.sep_id)
    return np.asarray(ids, dtype=np.int64)
