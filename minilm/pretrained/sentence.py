"""A loaded pretrained BERT with its tokenizer: hidden states and sentence embeddings.

Sentence embeddings as sentence-transformers makes them for all-MiniLM-L6-v2 (its ``modules.json``:
Transformer → Pooling(mean) → Normalize; Reimers & Gurevych 2019, §3):

    u = Σ_t m_t · h_t / max(Σ_t m_t, 1e-9)      mean of the last hidden states over real tokens
    e = u / max(‖u‖₂, 1e-12)                     unit length: cosine similarity = dot product

where m is the attention mask (1 on real tokens, 0 on [PAD]); [CLS] and [SEP] count as tokens.
Texts longer than ``max_seq_length`` (sentence_bert_config.json; else the model's positions) are
cut to that many tokens, [CLS] and [SEP] included.

Why not ``pooler_output``: the pooler, tanh(W·h[CLS] + b), was trained only by next-sentence
prediction, and a sentence-transformers model was fine-tuned through mean pooling, so its pooler
is whatever pre-training left there (docs/pretrained.md).

Letters: B batch, T time, C channels, L layers.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autograd import no_grad
from autograd.errors import CheckpointError
from minilm.tokenizers import WordPieceTokenizer
from minilm.tokenizers.hf_json import load_hf_tokenizer

from .bert import load_bert_model


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(B, T, C), (B, T) → (B, C): the mean over the positions where mask is 1."""
    m = mask.astype(hidden.dtype)[..., None]                    # (B, T, 1)
    return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero), as torch.nn.functional.normalize."""
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


@dataclass
class PretrainedBert:
    """What :func:`load_bert` returns. ``model``: BertModel, or BertForPreTraining when the folder
    has an MLM head; ``tokenizer``: WordPieceTokenizer from vocab.txt, else the HFTokenizer of
    tokenizer.json (what transformers 5 writes), None without either;
    ``missing``: optional parts the file lacked ("pooler.", "cls.seq_relationship.")."""

    model: object
    tokenizer: WordPieceTokenizer | None
    config: object
    hf_config: dict
    max_seq_length: int
    missing: list = field(default_factory=list)

    @property
    def bert(self):
        """The encoder (a BertModel), with or without heads around it."""
        return getattr(self.model, "bert", self.model)

    def tokenize(self, texts) -> list[list[str]]:
        """Each text as its tokens with [CLS] … [SEP], cut to ``max_seq_length``."""
        if self.tokenizer is None:
            raise CheckpointError("PretrainedBert.tokenize: this folder has no vocab.txt or tokenizer.json, so no "
                                  "tokenizer")
        tok = self.tokenizer
        if tok.cls_id is None or tok.sep_id is None:
            raise CheckpointError(f"PretrainedBert.tokenize: the vocabulary has no [CLS]/[SEP] roles ({tok.roles})")
        cls, sep, keep = tok.id_to_token(tok.cls_id), tok.id_to_token(tok.sep_id), self.max_seq_length - 2
        return [[cls, *tok.tokenize(t)[:keep], sep] for t in texts]

    def batch(self, texts) -> tuple[list[list[str]], np.ndarray, np.ndarray]:
        """``(tokens, input_ids (B, T), attention_mask (B, T))``, padded with [PAD] to the longest."""
        tokens = self.tokenize(texts)
        T = max((len(t) for t in tokens), default=0)
        pad = self.tokenizer.pad_id if self.tokenizer.pad_id is not None else 0
        ids = np.full((len(tokens), T), pad, dtype=np.int64)
        mask = np.zeros((len(tokens), T), dtype=np.int64)
        for i, t in enumerate(tokens):
            ids[i, :len(t)] = self.tokenizer.convert_tokens_to_ids(t)
            mask[i, :len(t)] = 1
        return tokens, ids, mask

    def forward(self, input_ids, attention_mask=None, segment_ids=None) -> dict:
        """NumPy outputs of the encoder: ``last_hidden_state`` (B, T, C), ``pooler_output`` (B, C),
        ``hidden_states``: the L + 1 arrays [embeddings, layer 1, …, layer L], each (B, T, C)."""
        with no_grad():
            out = self.bert(input_ids, segment_ids, attention_mask, output_hidden_states=True)
        return {"last_hidden_state": out["last_hidden_state"].data, "pooler_output": out["pooler_output"].data,
                "hidden_states": [h.data for h in out["hidden_states"]]}

    def encode(self, texts) -> dict:
        """Tokenise ``texts`` as one padded batch and run the encoder: :meth:`forward`'s outputs plus
        ``tokens``, ``input_ids`` and ``attention_mask``."""
        tokens, ids, mask = self.batch(texts)
        return {"tokens": tokens, "input_ids": ids, "attention_mask": mask, **self.forward(ids, mask)}

    def embed(self, texts, *, batch_size: int = 32, normalize: bool = True) -> tuple[list, np.ndarray]:
        """``(tokens, embeddings (N, C))``: mean pooling over the mask, then L2 normalisation."""
        texts = list(texts)
        tokens, rows = [], []
        for start in range(0, len(texts), batch_size):
            out = self.encode(texts[start:start + batch_size])
            tokens.extend(out["tokens"])
            rows.append(mean_pool(out["last_hidden_state"], out["attention_mask"]))
        emb = np.concatenate(rows) if rows else np.zeros((0, self.config.n_embd), dtype=np.float32)
        return tokens, (l2_normalize(emb) if normalize else emb)


def load_bert(directory) -> PretrainedBert:
    """Load a Hugging Face BERT folder (config.json, model.safetensors, and vocab.txt or tokenizer.json)
    into minilm.

    Every weight is mapped by the table in ``minilm/models/bert.py``; the tokenizer is ``vocab.txt``'s,
    following the folder's lower-casing and accent stripping, else ``tokenizer.json``'s (a folder
    saved by transformers 5 has only that). Raises CheckpointError naming the file and key."""
    directory = Path(directory)
    model, config, hf_config, missing = load_bert_model(directory)
    source = next((f for f in ("vocab.txt", "tokenizer.json") if (directory / f).is_file()), None)
    tokenizer = (WordPieceTokenizer.load(directory) if source == "vocab.txt" else
                 load_hf_tokenizer(directory) if source else None)
    if tokenizer is not None and tokenizer.vocab_size > config.vocab_size:
        raise CheckpointError(f"{directory / source}: {tokenizer.vocab_size} tokens, but config.json "
                              f"has vocab_size={config.vocab_size}")
    max_len = config.max_position_embeddings
    st = directory / "sentence_bert_config.json"
    if st.is_file():
        try:
            max_len = min(max_len, int(json.loads(st.read_text(encoding="utf-8"))["max_seq_length"]))
        except (ValueError, KeyError, TypeError) as e:
            raise CheckpointError(f"{st}: no readable max_seq_length: {e}") from None
    if max_len < 2:
        raise CheckpointError(f"{directory}: max_seq_length={max_len} leaves no room for [CLS] and [SEP]")
    return PretrainedBert(model, tokenizer, config, hf_config, max_len, missing)
