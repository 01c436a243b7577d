"""RoBERTa: BERT's encoder, pre-trained by masked LM alone, with a better recipe.

Liu et al. 2019, "RoBERTa: A Robustly Optimized BERT Pretraining Approach", §4.
RoBERTa keeps BERT's architecture and changes how it is trained:

1. **Dynamic masking** (§4.1): a fresh mask every time a sequence is read, instead of BERT's
   ``dupe_factor = 10`` masks made once (``minilm.corruption.MaskedDataset``, Task 6.1).
2. **No NSP, full sentences** (§4.2): one segment per input, packed with whole sentences up to the
   block size (FULL-SENTENCES, across documents; or DOC-SENTENCES, inside one document), and the
   masked-LM loss only (``minilm.data.roberta_blocks``, Task 6.1).
3. **Byte-level BPE** (§4.4): GPT-2's tokenizer, so no input is ever ``<unk>`` (Task 6.2).
4. Bigger batches, more data, longer training (§4.3, §5) — out of reach on a laptop.

The objective is BERT's masked LM with the mask drawn anew for every (epoch, sequence)::

    L_MLM(θ) = − Σ_t m_t · log p_θ(x_t | x̃) / Σ_t m_t,      x̃ = corrupt(x, m),  m ~ mask(seed, epoch, index)

where m_t = 1 at the ~15% masked positions (80% ``<mask>``, 10% random, 10% unchanged).

The model is :class:`RobertaForMaskedLM`: BERT's embeddings (word + learned position + a single
segment row, ``type_vocab_size = 1``) → n_layer post-LN blocks → BERT's MLM head
(dense → GELU → LayerNorm → tied decoder + bias). There is no pooler and no NSP head: nothing in
RoBERTa's pre-training would train them (Hugging Face's ``RobertaForMaskedLM`` has none either).

Letters: B batch, T time, C channels (n_embd), V vocabulary.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograd import Tensor, nn
from minilm.models.bert import BertConfig, BertEmbeddings, BertEncoder, BertModel
from minilm.models.bert_heads import BertLMPredictionHead, _check_labels, mlm_loss

__all__ = ["RobertaConfig", "RobertaModel", "RobertaForMaskedLM"]


@dataclass
class RobertaConfig(BertConfig):
    """BERT's config with RoBERTa's defaults (RoBERTa-base: V = 50265, 514 positions, 12 × 768)."""
    type_vocab_size: int = 1              # one segment: RoBERTa has no sentence pairs in pre-training
    layer_norm_eps: float = 1e-5          # RoBERTa's LayerNorm ε (BERT: 1e-12)


class RobertaModel(BertModel):
    """The encoder alone: embeddings → n_layer post-LN blocks. No pooler (nothing trains it).

    It reuses :meth:`BertModel.check_inputs` (the same input rules) but not BertModel's ``__init__``,
    which would build the pooler. ``forward(input_ids, attention_mask=None, output_hidden_states=False)``
    returns ``{"last_hidden_state": (B, T, C)}`` (and ``"hidden_states"`` when asked).
    """

    def __init__(self, config: RobertaConfig, *, rng):
        nn.Module.__init__(self)
        nn.check_rng("RobertaModel", rng)
        self.config = config
        self.embeddings = BertEmbeddings(config, rng=rng)
        self.encoder = BertEncoder(config, rng=rng)

    def forward(self, input_ids, attention_mask=None, output_hidden_states=False) -> dict:
        ids, seg, mask = self.check_inputs(input_ids, None, attention_mask)  # seg: all 0, one segment
        states = self.encoder(self.embeddings(ids, seg), mask=mask)          # n_layer + 1 × (B, T, C)
        out = {"last_hidden_state": states[-1]}
        if output_hidden_states:
            out["hidden_states"] = states
        return out


class RobertaForMaskedLM(nn.Module):
    """RoBERTa with its one pre-training head: ``roberta`` (RobertaModel) and ``lm_head``.

    ``forward(input_ids, attention_mask=None, labels=None)`` returns

    * ``logits`` (B, T, V): h' = LayerNorm(GELU(W·h + b)); logits = h'·Eᵀ + b_out (E tied to the input);
    * ``loss``: Task 5.2's ``mlm_loss``, the mean cross-entropy over positions with ``labels != -100``
      (fairseq sums over the masked tokens and divides by their number: the same), or None;
    * ``last_hidden_state`` (B, T, C).

    ``encode(input_ids, attention_mask)`` is the last hidden state alone (for fine-tuning).
    """

    def __init__(self, config: RobertaConfig, *, rng):
        super().__init__()
        self.config = config
        self.roberta = RobertaModel(config, rng=rng)
        self.lm_head = BertLMPredictionHead(config, self.roberta.embeddings.word_embeddings.weight, rng=rng)

    def encode(self, input_ids, attention_mask=None) -> Tensor:
        return self.roberta(input_ids, attention_mask)["last_hidden_state"]  # (B, T, C)

    def forward(self, input_ids, attention_mask=None, labels=None) -> dict:
        h = self.encode(input_ids, attention_mask)     # (B, T, C)
        logits = self.lm_head(h)                       # (B, T, V)
        loss = None
        if labels is not None:
            B, T = np.shape(getattr(input_ids, "data", input_ids))
            loss = mlm_loss(logits, _check_labels("RobertaForMaskedLM", labels, (B, T), "labels"))
        return {"logits": logits, "loss": loss, "last_hidden_state": h}
