"""Do soft targets help in DistilBERT's own setting? The measurement behind the soft-target claims
of ``minilm experiment distillation`` and ``distillation-transfer``.

Those experiments distil a *fine-tuned* teacher's three-class output. DistilBERT (Sanh et al. 2019,
§3, Table 4) distils at pre-training: the student matches the pre-trained teacher's masked-word
distribution over the whole vocabulary (L_ce, soft targets at T = 2), beside the MLM loss (L_mlm)
and a cosine loss on the last hidden states (L_cos), 5 : 2 : 1; only then is the student fine-tuned
on each task. Its ablation: without L_ce the GLUE macro-score drops 2.96 points.

For each seed this tool does the same in miniature, with ``minilm experiment distillation``'s
teacher settings (4 layers × 64, the synthetic corpus, the entailment pairs):

1. a BERT teacher pre-trained with MLM + NSP for ``--teacher-steps`` steps;
2. students of 2 layers initialised from every other teacher layer and its MLM head, distilled on
   the teacher's pre-training pairs for ``--distil-steps`` steps (``bakeoff_families.DistilledStudent``)
   with DistilBERT's loss, without its soft targets (L_mlm + L_cos), or with nothing (the truncated
   teacher as initialised);
3. the teacher and every student fine-tuned on the same 300 labelled pairs as the experiment's
   teacher (``distillation.finetune_on_pairs``) and scored on its 1,000 test pairs.

    python tools/distil_at_pretraining.py                     # seeds 0-2, teacher 600 steps, distil 300
    python tools/distil_at_pretraining.py --teacher-steps 150 # the experiments' teacher pre-training
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from minilm.experiments.bakeoff_families import DISTIL_WEIGHTS  # noqa: E402  (after the path)

# row -> DistilledStudent weights (None: no distillation, the truncated teacher as initialised)
STUDENTS = {
    "no distillation": None,
    "MLM + cos": {**DISTIL_WEIGHTS, "soft": 0.0},
    "soft + MLM + cos": DISTIL_WEIGHTS,           # DistilBERT's 5 : 2 : 1
}


def pretrained_teacher(seed: int, s: dict, steps: int):
    """``(BertForPreTraining, tokenizer, data, batch)``: the distillation experiment's teacher after
    ``steps`` MLM + NSP steps (``distillation.pretrained_teacher``, with its MLM head), the encoded
    labelled pairs, and the batch function of its pre-training pairs (``finetune.mlm_nsp_batches``)."""
    from minilm.data import synthetic_corpus
    from minilm.downstream.finetune import mlm_nsp_batches
    from minilm.experiments import distillation
    teacher, tok, (train, test) = distillation.pretrained_teacher(seed, s, steps=steps, heads=True)
    teacher.eval()
    docs = synthetic_corpus(s["docs"], rng=np.random.default_rng([seed, 2]))          # pretrain_encoder's documents
    batch, _ = mlm_nsp_batches(tok, docs, batch_size=s["batch_size"], max_seq_length=s["max_len"], seed=seed)
    return teacher, tok, distillation._encoded(tok, train, test, s), batch


def measure(seed: int, s: dict, teacher_steps: int, distil_steps: int) -> dict:
    """Fine-tuned test accuracy (%) of the teacher and of each student of :data:`STUDENTS`."""
    from minilm.experiments.bakeoff_families import DistilledStudent
    from minilm.experiments.distillation import finetune_on_pairs
    from minilm.train import fit, short_run
    teacher, tok, data, batch = pretrained_teacher(seed, s, teacher_steps)
    out = {"teacher": 100 * finetune_on_pairs(teacher.bert, data, seed, s)[1].mean()}
    source = SimpleNamespace(tokenizer=tok, batch_size=s["batch_size"], batch=batch)
    for name, weights in STUDENTS.items():
        student = DistilledStudent(source, teacher, seed, weights=weights)
        if weights is not None:
            fit(student.model, lambda rng: student.loss(student.model, student.batch(rng))[0],
                short_run(distil_steps, 1e-3, [seed, 12]), name="distillation")
        student.model.eval()
        out[name] = 100 * finetune_on_pairs(student.model.bert, data, seed, s)[1].mean()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--teacher-steps", type=int, default=600,
                    help="the teacher's MLM + NSP steps (default 600; the experiments' teacher: 150)")
    ap.add_argument("--distil-steps", type=int, default=300, help="distillation steps per student (default 300)")
    ap.add_argument("--quick", action="store_true", help="the experiment's --quick sizes, few steps (a smoke test)")
    args = ap.parse_args(argv)
    from minilm.experiments import distillation, settings_of
    s = settings_of(distillation.CONFIG.quick() if args.quick else distillation.CONFIG())
    teacher_steps, distil_steps = (5, 5) if args.quick else (args.teacher_steps, args.distil_steps)
    columns = ["teacher", *STUDENTS]
    print("seed  " + "  ".join(f"{c:>16}" for c in columns))
    rows = []
    for seed in (int(x) for x in args.seeds.split(",")):
        rows.append(measure(seed, s, teacher_steps, distil_steps))
        print(f"{seed:>4}  " + "  ".join(f"{rows[-1][c]:16.1f}" for c in columns), flush=True)
    print("mean  " + "  ".join(f"{np.mean([r[c] for r in rows]):16.1f}" for c in columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
