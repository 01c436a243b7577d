"""What the recipes share: the config base classes, the corpus (synthetic or ``--corpus FILE``) and
its train/held-out split."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import numpy as np

from autograd.errors import ConfigError, MiniLMError
from minilm.data import read_corpus, synthetic_corpus, train_val_split
from minilm.recipes.config import nested
from minilm.train import TrainConfig


@dataclass
class RecipeConfig:
    """Every recipe's config holds ``minilm.train``'s schedule as ``train`` (steps, lr, warm-up,
    periods, seed: their help is TrainConfig's comments); a recipe gives it the defaults it changes,
    ``train: TrainConfig = nested(TrainConfig(steps=600))``, and its model's config as ``model``."""
    train: TrainConfig = nested(TrainConfig())

    @property
    def seed(self):
        """The run's seed (``train.seed``): the data, the model's initial weights, every draw."""
        return self.train.seed

    def train_config(self) -> TrainConfig:
        """The schedule ``minilm.train.train`` takes, its periods capped at the run's length."""
        cfg = self.train
        if cfg.steps < 1:
            raise ConfigError(f"steps={cfg.steps}: a run needs at least 1 optimizer step (--steps)")
        return dataclasses.replace(cfg, eval_every=min(cfg.eval_every, cfg.steps),
                                   checkpoint_every=min(cfg.checkpoint_every, cfg.steps))


@dataclass
class CorpusConfig(RecipeConfig):
    """A recipe that pre-trains on documents of sentences."""
    corpus: Optional[str] = None    # "real": the English text minilm ships (Jargon File 4.4.7, 1.3 MB,
                                    # minilm/data/real/); or a UTF-8 text file (or .gz): documents separated by
                                    # blank lines, one sentence per line (default: the synthetic corpus)
    docs: int = 400                 # synthetic documents to generate


def load_documents(cfg: CorpusConfig) -> tuple[list, list]:
    """(train documents, held-out documents), each a list of documents of sentence strings."""
    rng = np.random.default_rng([cfg.seed, 12345])
    if cfg.corpus:
        docs = read_corpus(cfg.corpus)
    else:
        docs = synthetic_corpus(cfg.docs, rng=rng)
    if len(docs) < 4:
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
