"""What the papers found that the bake-off checks, and what was measured where the miniature differs.

Two claims, read on the fine-tuned entailment score's gain over each network's own init (the frozen
probe's gain when a run has no fine-tuning): a bidirectional encoder beats GPT (Devlin et al. 2019),
and the families that followed BERT improve on it. Each carries the reason measured on this machine
when it does not hold: on the synthetic text (``why_not``), and on the shipped English text
(``why_not_real``, ``--corpus real``).
"""
from __future__ import annotations

from dataclasses import replace

from minilm.experiments.bakeoff_probes import BERT, DEBERTA, ELECTRA, GPT, ROBERTA, XLNET
from minilm.experiments.claims import Beats

# Measured on this machine: the GPT and BERT rows' run_one at bakeoff.py's defaults but --steps 250, 500 and 4000
# (seeds 0-2; 1000 is the default table), and BERT's at --steps 250 with lr 1e-3, 4e-3 and 8e-3 (seeds 0-2; its
# MLM loss at 4e-3 from seeds 0-1).
PLATEAU = (
    "BERT's masked LM learns from the 15% of tokens it masks, GPT's LM from all of them, so BERT leaves the "
    "unigram plateau later (its Appendix C.1 notes that the MLM model converges more slowly): at 250 steps its "
    "held-out MLM loss is only 0.18 nats below a unigram model's on the same masked tokens, where GPT's is 2.24 "
    "below; at 1,000 steps 0.61 against 3.27 (the loss - unigram column). The learning rate does not move it: at "
    "250 steps BERT's held-out MLM loss is 5.28, 5.22 and 5.21 at peak rates 1e-3, 2e-3 (the default) and 4e-3")
BERT_WHY_NOT = (
    "measured: BERT needs more steps than GPT, and the gap turns with compute. The fine-tuned entailment gain over "
    "each network's own init, mean over seeds 0-2 (`--steps`): at 250 steps BERT -7.2 (accuracy 60.5%) and GPT "
    "+3.9 (76.4%); at 500 BERT +2.2 (69.9%) and GPT +5.9 (78.3%); at 1,000, the default, BERT +18.0 (85.7%) and "
    "GPT +9.5 (81.9%), BERT ahead in every seed; at 4,000 BERT +26.6 (94.3%) and GPT +9.4 (81.9%). " + PLATEAU +
    ". The frozen probe turns later still (its gain: BERT -5.1, +3.3, +30.7 at 250, 1,000, 4,000 steps; GPT "
    "+3.9, +6.1, -7.0)")
# The same reason read on the frozen probe (--finetune-steps 0), with BERT's and GPT's probe gains at lr 1e-3 to
# 8e-3 (seeds 0-2, 250 steps).
BERT_WHY_NOT_PROBE = (
    "measured: the frozen features need more steps than the default 1,000, and the gap turns with compute. The "
    "entailment probe's gain over each network's own init, mean over seeds 0-2 (`--steps`): at 250 steps BERT "
    "-5.1 and GPT +3.9; at 500 BERT -1.7 and GPT +4.5; at 1,000 BERT +3.3 and GPT +6.1; at 4,000 BERT +30.7 "
    "(probe 86.4%) and GPT -7.0 (60.6%), BERT ahead in every seed. " + PLATEAU + "; at 250 steps its entailment "
    "gain is -7.5, -5.1, +4.8 and, at 8e-3, -11.4 (GPT's +0.7, +3.9, +1.9, +2.9); at 4e-3 BERT is ahead on the "
    "mean, but its seeds give +17.4, -3.6 and +0.6")
# Measured on this machine: the RoBERTa, ELECTRA, XLNet and DeBERTa rows' run_one at bakeoff.py's defaults but
# --steps 4000, and the BERT row's without its NSP loss (nsp_labels=None) at 1000 and 4000 steps (seeds 0-2). Which
# of RoBERTa's changes costs it: its row's run_one at 1000 and 4000 steps with one change each (seeds 0-2): BERT's
# WordPiece tokenizer in place of byte-level BPE (roberta.corpus_and_tokenizer given WordPieceTokenizer); BERT's
# input, RobertaRecipeConfig(packing="segment-pair"), whose NSP pairs are built in one pass over the documents;
# byte-level BPE of 656 tokens (vocab_size, 1000 steps); and the BERT row's with BertRecipeConfig(dupe_factor=1).
LATER_WHY_NOT = (
    "measured: more steps do not turn it. At 4,000 steps the fine-tuned gains over each network's own init, mean "
    "over seeds 0-2, are BERT +26.6 (accuracy 94.3%), DeBERTa +25.5 (81.7%), XLNet +22.2 (79.8%), ELECTRA +6.8 "
    "(68.1%) and RoBERTa +2.1 (60.7%): DeBERTa stays level with BERT on the gain (behind on accuracy, from a "
    "lower init), XLNet closes half of its gap (9.1 points behind at 1,000 steps, 4.4 at 4,000), and RoBERTa and "
    "ELECTRA fall further behind. Part of BERT's early lead is next-sentence prediction, the only pre-training "
    "task here that reads a pair of sentences: trained without it, BERT fine-tunes to 74.8% at 1,000 steps (gain "
    "+7.1, below RoBERTa's +10.0) and 93.9% at 4,000, against 85.7% and 94.3% with it; and it needs its pairs' "
    "variety: built in one pass over the documents instead of BERT's five (dupe_factor 1), the pairs give 72.9% "
    "(+5.1) at 1,000 steps. At 4,000 steps BERT without NSP is still 33.2 points above RoBERTa. RoBERTa's "
    "changes, undone one at a time (seeds 0-2): with BERT's WordPiece in place of byte-level BPE it reaches "
    "75.9% at 1,000 steps and 71.7% at 4,000 (gains +13.3 and +9.2, against +10.0 and +2.1), and not for the "
    "vocabulary's size (byte-level BPE of 656 tokens: 69.1%, +1.7, at 1,000); pre-trained on BERT's "
    "SEGMENT-PAIR+NSP input instead of FULL-SENTENCES (its byte-level BPE kept) it reaches 65.7% at 1,000 steps "
    "and 82.6% at 4,000 (gains +4.8 and +21.7, BERT's +26.6). At 4,000 steps the input format is most of "
    "RoBERTa's deficit: the task reads a pair of sentences, the layout BERT's inputs pre-train on and "
    "FULL-SENTENCES blocks never show. The papers' gains come with each family's own data, batch and scale, which this bake-off holds equal")
LATER_WHY_NOT_PROBE = (
    "measured: more steps do not turn it. At 4,000 steps (seeds 0-2) BERT's entailment probe gain grows to +30.7 "
    "while the later families stay below it: DeBERTa +15.3, RoBERTa +11.7, ELECTRA +8.9, XLNet +5.4. The papers' "
    "gains come with each family's own data, batch and scale, which this bake-off holds equal; which of those "
    "the miniature would need is not measured")
# On the shipped English text (--corpus real), measured on this machine: the GPT and BERT rows' run_one at bakeoff.py's
# defaults but --steps 2000 and 4000, and the RoBERTa, ELECTRA, XLNet and DeBERTa rows' at --steps 2000 (seeds 0-2;
# 1000 is the real page's table).
BERT_WHY_NOT_REAL = (
    "measured: on this text BERT's masked LM stays near the unigram plateau, and four times the steps do not turn "
    "the gap. The fine-tuned gain over each network's own init, mean over seeds 0-2 (`--corpus real --steps`): "
    "BERT +1.3, -2.4 and +11.3 at 1,000 (the default), 2,000 and 4,000 steps against GPT's +4.2, +1.9 and +12.8 "
    "(at 4,000 BERT is ahead in two seeds of three: +17.2, +8.0, +8.6 against +16.4, +4.4, +17.6). BERT's "
    "held-out MLM loss is 0.34, 0.45 and 0.50 nats below the unigram model's on the same masked tokens (GPT's 1.23, "
    "1.45 and 1.74 below), where on the synthetic text it is 0.61 below at 1,000 steps")
LATER_WHY_NOT_REAL = (
    "measured: on this text the order turns with compute, within the seeds' spread. At 2,000 steps (`--corpus real "
    "--steps 2000`, seeds 0-2) the fine-tuned gains are RoBERTa +0.7 ± 9.3, ELECTRA +5.3 ± 17.9, XLNet +4.5 ± 11.1 "
    "and DeBERTa +4.5 ± 3.2 against BERT's -2.4 ± 6.4: every later family is above BERT on the mean, none by more "
    "than its seeds' spread. XLNet has not left the unigram plateau even then (its held-out loss 0.004 nats below "
    "the unigram model's)")
FINETUNED_READOUT = "read here on the fine-tuned entailment score's gain over each network's own init"
PROBE_READOUT = "read here on the entailment probe's gain over each network's own init"
CLAIMS = [
    Beats("A bidirectional encoder beats the left-to-right GPT at equal size (Devlin et al. 2019, Table 1: MNLI-m "
          f"84.6 vs 82.1, test); {FINETUNED_READOUT}.", "finetuned_gain", above=(BERT,), below=(GPT,),
          why_not=BERT_WHY_NOT, why_not_real=BERT_WHY_NOT_REAL),
    Beats("The families that followed BERT improve on it (MNLI-m dev: ELECTRA-base 88.8, RoBERTa-large 90.2, "
          f"XLNet-large 90.8, DeBERTa-large 91.1, at their own scales); {FINETUNED_READOUT}.", "finetuned_gain",
          above=(ROBERTA, ELECTRA, XLNET, DEBERTA), below=(BERT,), why_not=LATER_WHY_NOT,
          why_not_real=LATER_WHY_NOT_REAL),
]


def claims_for(settings: dict) -> list:
    """:data:`CLAIMS`, read on the fine-tuned readout, or on the frozen probe when ``finetune_steps``
    is 0 (the reasons then quote the probe's numbers; none was measured on the probe on the real text)."""
    if settings["finetune_steps"]:
        return CLAIMS
    why = {CLAIMS[0].paper: BERT_WHY_NOT_PROBE, CLAIMS[1].paper: LATER_WHY_NOT_PROBE}
    return [replace(c, metric="entailment_gain", paper=c.paper.replace(FINETUNED_READOUT, PROBE_READOUT),
                    why_not=why[c.paper], why_not_real="") for c in CLAIMS]
