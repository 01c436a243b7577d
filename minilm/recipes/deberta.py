"""DeBERTa: masked LM with disentangled attention and the enhanced mask decoder (He et al. 2021).

MLM only (as RoBERTa and DeBERTa train): ~15% of the tokens of each sentence are corrupted 80/10/10
and predicted. The encoder sees relative positions only (Task 12.4's three-term scores); absolute
positions enter just before the MLM head. The summary compares held-out MLM accuracy with always
predicting the most frequent token and with a BERT of the same size trained MLM-only on the same
sentences for --bert-steps steps (0 = skip that comparison).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from minilm.corruption import mask_tokens
from minilm.data import pad_batch
from minilm.downstream.baselines import MostFrequentToken, NGramLM
from minilm.models.deberta import DebertaConfig, DebertaForMaskedLM
from minilm.recipes.common import CorpusConfig, load_documents, texts
from minilm.recipes import recipe
from minilm.recipes.config import nested
from minilm.train import TrainConfig
from minilm.tokenizers import WordPieceTokenizer
from autograd import no_grad
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForPreTraining
from minilm.train import fit, short_run


@dataclass
class DebertaRecipeConfig(CorpusConfig):
    """``minilm train deberta``: one option per field."""
    max_seq_length: int = 32              # tokens per sentence, the rest cut
    model: DebertaConfig = nested(DebertaConfig(vocab_size=400, n_layer=2, n_head=4, n_embd=64),
                                  set_by_recipe=("vocab_size", "max_position_embeddings", "pos_att_type"))
    batch_size: int = 32                  # sentences per step
    vocab_size: int = 400                 # WordPiece vocabulary size
    bert_steps: Optional[int] = None      # steps of the same-size BERT (MLM only) it is compared with
                                          # (default: --steps; 0 = none)
    train: TrainConfig = nested(TrainConfig(steps=600, lr=2e-3, warmup=60))


@recipe("deberta", config=DebertaRecipeConfig, chapter=12)
class DebertaRecipe:
    def __init__(self, cfg: DebertaRecipeConfig):
        train_docs, val_docs = load_documents(cfg)
        tok = self.tokenizer = WordPieceTokenizer.train(texts(train_docs), cfg.vocab_size)

        def rows(docs):
            seqs = [tok.encode(s, add_special_tokens=True) for s in texts(docs)]
            return pad_batch(seqs, tok.pad_id, min(max(len(s) for s in seqs), cfg.max_seq_length), truncate=True)

        self.train_ids, self.train_mask = rows(train_docs)
        self.val_ids, self.val_mask = rows(val_docs)
        self.special = [tok.pad_id, tok.cls_id, tok.sep_id]
        # one fixed mask of the held-out sentences, so evaluations are comparable across steps
        self.val_inputs, self.val_labels = self._mask(self.val_ids, np.random.default_rng([cfg.seed, 99]))
        self.batch_size, self.cfg = cfg.batch_size, cfg
        self.model_config = replace(cfg.model, vocab_size=tok.vocab_size, max_position_embeddings=self.train_ids.shape[1])
        self.model = DebertaForMaskedLM(self.model_config, rng=np.random.default_rng(cfg.seed))
        self.most_frequent = MostFrequentToken().fit(self.train_ids, ignore_ids=self.special)
        self.unigram = NGramLM(order=1).fit([r[m == 1] for r, m in zip(self.train_ids, self.train_mask)],
                                            tok.vocab_size)

    def _mask(self, ids, rng):
        return mask_tokens(ids, mask_id=self.tokenizer.mask_id, vocab_size=self.tokenizer.vocab_size,
                           special_ids=self.special, rng=rng)

    def batch(self, rng):
        idx = rng.integers(0, len(self.train_ids), size=self.batch_size)
        inputs, labels = self._mask(self.train_ids[idx], rng)
        return {"input_ids": inputs, "attention_mask": self.train_mask[idx], "labels": labels}

    def loss(self, model, batch):
        out = model(batch["input_ids"], batch["attention_mask"], batch["labels"])
        return out["loss"], {"tokens": int(batch["attention_mask"].sum())}

    def _accuracy(self, forward):
        """(mean loss, MLM accuracy) on the held-out sentences; ``forward(inputs, mask, labels)`` →
        (loss Tensor, logits Tensor)."""
        loss, correct, n_pred, n = 0.0, 0, 0, len(self.val_inputs)
        for i in range(0, n, 64):
            sl = slice(i, i + 64)
            labels = self.val_labels[sl]
            out_loss, logits = forward(self.val_inputs[sl], self.val_mask[sl], labels)
            loss += out_loss.item() * len(labels) / n
            m = labels != -100
            correct += int((logits.data.argmax(-1)[m] == labels[m]).sum())
            n_pred += int(m.sum())
        return loss, correct / max(n_pred, 1)

    def evaluate(self, model):
        def forward(inputs, mask, labels):
            out = model(inputs, mask, labels)
            return out["loss"], out["logits"]
        loss, acc = self._accuracy(forward)
        return {"loss": loss, "mlm_accuracy": acc}

    def _bert_accuracy(self, steps) -> float:
        """A BERT of the same size (absolute positions at the input, MLM only) on the same data."""
        a = self.cfg
        cfg = BertConfig(vocab_size=self.tokenizer.vocab_size, max_position_embeddings=self.train_ids.shape[1],
                         n_layer=a.model.n_layer, n_head=a.model.n_head, n_embd=a.model.n_embd, dropout=0.0)
        bert = BertForPreTraining(cfg, rng=np.random.default_rng(a.seed))

        def loss_fn(rng):
            b = self.batch(rng)
            return bert(b["input_ids"], None, b["attention_mask"], mlm_labels=b["labels"])["loss"]
        fit(bert, loss_fn, short_run(steps, a.train.lr, [a.seed, 7]), name="BERT (MLM only)")
        with no_grad():
            _, acc = self._accuracy(lambda x, m, y: (lambda o: (o["loss"], o["mlm_logits"]))(
                bert(x, None, m, mlm_labels=y)))
        return acc

    def baselines(self):
        out = {"most_frequent_token_accuracy": self.most_frequent.accuracy(self.val_labels),
               "unigram_loss": self.unigram.loss(self.val_labels, self.val_labels)}   # the MLM loss of p(w)
        steps = self.cfg.train.steps if self.cfg.bert_steps is None else self.cfg.bert_steps
        if steps > 0:
            out["bert_mlm_accuracy"] = self._bert_accuracy(steps)
            out["bert_steps"] = steps
        return out

    @staticmethod
    def describe(s) -> str:
        m, b = s["metrics"], s["baselines"]
        lines = [f"DeBERTa: held-out MLM loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} after {s['steps']} "
                 f"steps, {s['parameters']:,} parameters",
                 f"MLM accuracy {m['mlm_accuracy']:.1%} vs most-frequent-token {b['most_frequent_token_accuracy']:.1%}"]
        if "bert_mlm_accuracy" in b:
            lines.append(f"same-size BERT (MLM only, {b['bert_steps']} steps): {b['bert_mlm_accuracy']:.1%} "
                         f"({100 * (m['mlm_accuracy'] - b['bert_mlm_accuracy']):+.1f} points for DeBERTa)")
        return "\n".join(lines)

