"""ELECTRA: a small generator fills in masked tokens, the discriminator spots the replacements.

Clark et al. 2020, §2 (google-research/electra, ``pretrain/pretrain_helpers.py``): [CLS] sentences
[SEP] blocks of WordPiece tokens; 15% of the tokens are masked (85% [MASK], 15% kept), the generator
(--generator-hidden-fraction of the discriminator's width) predicts them, its samples replace them,
and the discriminator labels every token original or replaced. L = L_MLM + 50·L_Disc; the two networks share one embedding table. --objective picks
an ablation of §3.2: electra15 (discriminator loss on the masked 15% only), replace_mlm (MLM on
generator-replaced input), all_tokens_mlm (predict every token, with a copy mechanism). The summary
compares the discriminator's accuracy with always answering "original", and the generator's MLM
accuracy with always predicting the most frequent token.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from minilm.data import encode_documents, pack_sentences, pad_batch
from minilm.downstream.baselines import MostFrequentToken, NGramLM
from minilm.models.electra import Electra, ElectraConfig
from minilm.recipes import recipe
from minilm.recipes.common import CorpusConfig
from minilm.recipes.config import nested
from minilm.recipes.roberta import corpus_and_tokenizer
from minilm.tokenizers import WordPieceTokenizer
from minilm.train import TrainConfig


@dataclass
class ElectraRecipeConfig(CorpusConfig):
    """``minilm train electra``: one option per field, the model's (the two networks, the objective,
    the loss weights) and the schedule's included."""
    model: ElectraConfig = nested(ElectraConfig(vocab_size=400, dropout=0.0),
                                  set_by_recipe=("vocab_size", "max_position_embeddings", "type_vocab_size",
                                                 "pad_id", "mask_id", "special_ids"))
    max_seq_length: int = 64                                     # tokens per block, [CLS] and [SEP] included
    batch_size: int = 32                                         # blocks per step
    vocab_size: int = 400                                        # WordPiece vocabulary size
    train: TrainConfig = nested(TrainConfig(steps=600, lr=2e-3, warmup=60))


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve = P(score of a random positive > score of a random negative),
    from the ranks (Mann–Whitney U; tied scores are rare for float logits and broken by order).
    NaN if one class is absent."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels).astype(bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = np.empty(len(scores))
    ranks[np.argsort(scores, kind="stable")] = np.arange(1, len(scores) + 1)
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


UNLEARNED_AUC = 0.6  # below this the summary says the detector has not learned (measured: 0.545 at the defaults)


@recipe("electra", config=ElectraRecipeConfig, chapter=7,
        variants={o: {"objective": o} for o in ("electra15", "replace_mlm", "all_tokens_mlm")})
class ElectraRecipe:
    def __init__(self, cfg: ElectraRecipeConfig):
        train_docs, val_docs, tok = corpus_and_tokenizer(cfg, WordPieceTokenizer)
        self.tokenizer = tok

        def blocks(docs):  # [CLS] whole sentences (FULL-SENTENCES, [SEP] between documents) [SEP]
            packed = pack_sentences(encode_documents(docs, tok.encode), cfg.max_seq_length - 2,
                                    mode="full", sep_id=tok.sep_id)
            return [np.array([tok.cls_id, *b, tok.sep_id], dtype=np.int64) for b in packed]

        self.train_blocks, self.val_blocks = blocks(train_docs), blocks(val_docs)[:128]
        self.seed, self.batch_size = cfg.seed, cfg.batch_size
        self.model_config = replace(cfg.model, vocab_size=tok.vocab_size, max_position_embeddings=cfg.max_seq_length,
                                    pad_id=tok.pad_id, mask_id=tok.mask_id, special_ids=(tok.cls_id, tok.sep_id))
        self.model = Electra(self.model_config, rng=np.random.default_rng(cfg.seed))
        self.most_frequent = MostFrequentToken().fit(self.train_blocks, ignore_ids=tok.special_ids)
        self.unigram = NGramLM(order=1).fit(self.train_blocks, tok.vocab_size)
        self._baselines: dict = {}

    def _not_detecting(self, auc: float) -> str:
        """The summary's hint when the discriminator ranks replaced tokens little better than chance."""
        line = (f"the discriminator has not learned to spot the generator's samples (AUC {auc:.3f}; 0.5 is "
                "chance): ")
        if self.model_config.temperature <= 1:
            return line + ("at this size a generator sampled at temperature 1 writes replacements too plausible for "
                           "it (Clark et al. 2020, Figure 3: too strong a generator makes the task too hard). "
                           "--temperature 2, as the experiments sample, reaches AUC about 0.74 in 600 steps\n")
        return line + "try more --steps, or a smaller --generator-hidden-fraction\n"

    def _pad(self, blocks):
        return pad_batch(blocks, self.tokenizer.pad_id)  # ids, attention_mask (B, T)

    def batch(self, rng):
        idx = rng.integers(0, len(self.train_blocks), size=self.batch_size)
        ids, mask = self._pad([self.train_blocks[i] for i in idx])
        return {"input_ids": ids, "attention_mask": mask, "rng": rng}  # masking and sampling draw from rng

    def loss(self, model, batch):
        out = model(batch["input_ids"], batch["attention_mask"], rng=batch["rng"])
        return out["loss"], {"tokens": int(batch["attention_mask"].sum())}

    def evaluate(self, model):
        """Held-out losses and accuracies. The same generator draws every time (a fixed rng: the
        masks are the same, the samples follow the generator as it learns)."""
        rng = np.random.default_rng([self.seed, 4242])
        sums = {"loss": 0.0, "mlm_loss": 0.0, "disc_loss": 0.0}
        scores, labels, mlm_ok, main_ok, mlm_labels = [], [], [], [], []
        masked_scores, masked_labels = [], []  # the masked positions only: where ELECTRA-15% is trained
        n = len(self.val_blocks)
        for i in range(0, n, 64):
            ids, mask = self._pad(self.val_blocks[i:i + 64])
            out = model(ids, mask, rng=rng)
            for k in sums:
                sums[k] += out[k].item() * len(ids) / n
            m = out["masked"]
            mlm_ok.append(out["mlm_logits"].data.argmax(-1)[m] == ids[m])
            mlm_labels.append(out["mlm_labels"][m])
            real = mask.astype(bool)
            labels.append(out["disc_labels"][real])
            if out.get("disc_logits") is not None and model.config.objective in ("electra", "electra15"):
                scores.append(out["disc_logits"].data[real])
                masked_scores.append(out["disc_logits"].data[m])
                masked_labels.append(out["disc_labels"][m])
            if "main_logits" in out:
                w = out["main_weights"]
                main_ok.append(out["main_logits"].data.argmax(-1)[w] == out["main_labels"][w])
        y = np.concatenate(labels).astype(bool)
        metrics = {**sums, "mlm_accuracy": float(np.concatenate(mlm_ok).mean()), "replaced_rate": float(y.mean())}
        if scores:
            s = np.concatenate(scores)
            pred = s > 0
            tp = int((pred & y).sum())
            precision, recall = tp / max(int(pred.sum()), 1), tp / max(int(y.sum()), 1)
            metrics.update(disc_accuracy=float((pred == y).mean()), replaced_precision=precision,
                           replaced_recall=recall, replaced_f1=2 * precision * recall / max(precision + recall, 1e-12),
                           disc_auc=roc_auc(s, y),
                           disc_auc_masked=roc_auc(np.concatenate(masked_scores), np.concatenate(masked_labels)))
        if main_ok:
            metrics["main_mlm_accuracy"] = float(np.concatenate(main_ok).mean())
        # the baselines of these numbers: answer "original" everywhere; predict the commonest token; the
        # generator's MLM loss of a unigram model p(w)
        targets = np.concatenate(mlm_labels)
        self._baselines = {"always_original_accuracy": 1.0 - float(y.mean()),
                           "most_frequent_token_accuracy": self.most_frequent.accuracy(targets),
                           "unigram_loss": self.unigram.loss(targets, targets)}
        return metrics

    def baselines(self):
        return dict(self._baselines)

    def describe(self, s) -> str:
        m, b = s["metrics"], s["baselines"]
        head = (f"ELECTRA: held-out loss {s['initial_loss']:.3f} -> "
                f"{s['final_loss']:.3f} (generator MLM {m['mlm_loss']:.3f}, main network {m['disc_loss']:.4f}) after "
                f"{s['steps']} steps, {s['parameters']:,} parameters\n")
        if "disc_accuracy" in m:
            head += (f"discriminator accuracy {m['disc_accuracy']:.1%} vs always-original "
                     f"{b['always_original_accuracy']:.1%}; replaced tokens: F1 {m['replaced_f1']:.2f} (precision "
                     f"{m['replaced_precision']:.2f}, recall {m['replaced_recall']:.2f}), AUC {m['disc_auc']:.3f} "
                     f"({m['disc_auc_masked']:.3f} on the masked positions)\n")
            if m["disc_auc"] < UNLEARNED_AUC:
                head += self._not_detecting(m["disc_auc"])
        if "main_mlm_accuracy" in m:
            head += f"main network MLM accuracy {m['main_mlm_accuracy']:.1%} on its predicted positions\n"
        return head + (f"generator MLM accuracy {m['mlm_accuracy']:.1%} vs most-frequent-token "
                       f"{b['most_frequent_token_accuracy']:.1%}")

