# %% [markdown]
# # Walkthrough 8 — Distillation: a small student learns from a big teacher
#
# A trained *teacher* knows more than its top answer: its whole output distribution says which
# wrong answers are almost right. Hinton et al. (2015) train a smaller *student* to match that
# distribution, softened by a temperature T, mixed with the ordinary loss on the labels:
#
# $$\mathcal{L} = \alpha_{\text{hard}}\,\mathrm{CE}(s, y) + \alpha_{\text{soft}}\,T^2\,\mathrm{KL}\big(\mathrm{softmax}(t/T)\,\|\,\mathrm{softmax}(s/T)\big)$$
#
# (T² keeps the soft term's gradients the same size whatever T is.) DistilBERT adds two more
# ideas that we use here: the student **starts from the teacher's layers** (one out of two),
# and the teacher is frozen: only the student learns.
#
# Theory and the graded slots: [Task module 10 — distillation](../tasks/10-distillation.md).

# %%
import time

import _checkout  # noqa: F401  (puts the checkout's root on sys.path: see _checkout.py)

import numpy as np

import autograd.functional as F
from autograd import Tensor, no_grad, optim
from minilm.data import sentiment_dataset
from minilm.downstream.distill import (DistillWeights, DistilStudent, StudentConfig, default_layer_map, distill_objective,
                            init_student_from_teacher, inference_parameters)
from minilm.downstream.finetune import classification_accuracy, encode_texts
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForSequenceClassification
from minilm.tokenizers import WordPieceTokenizer

start = time.perf_counter()
rng = np.random.default_rng(0)

# %% [markdown]
# ## The task: sentiment with negation
#
# Short reviews labelled positive (1) or negative (0). Half are negated (`was not good`), so a
# bag of words is not enough: the model must see *not* next to the adjective.

# %%
train, test = sentiment_dataset(2000, rng=rng), sentiment_dataset(500, rng=rng)
for e in train[:4]:
    print(f"{e.label}  negated={e.negated!s:5}  {e.text}")
tok = WordPieceTokenizer.train([e.text for e in train], vocab_size=300)
ids, mask = encode_texts(tok, [e.text for e in train], 16)
test_ids, test_mask = encode_texts(tok, [e.text for e in test], 16)
y, y_test = np.array([e.label for e in train]), np.array([e.label for e in test])
negated = np.array([e.negated for e in test])
print("inputs:", ids.shape, "(sentences, tokens)")

# %% [markdown]
# ## The teacher: a 4-layer BERT classifier
#
# We train it directly on the labels (the full recipe, `minilm train distill`, pre-trains it
# with MLM + NSP first). Its logits come from a linear layer on h[CLS].


# %%
def train_classifier(model, loss_fn, steps, lr=2e-3):
    optimizer = optim.AdamW(model.parameters(), lr=lr)
    for step in range(steps):
        rows = rng.integers(0, len(y), size=32)
        loss = loss_fn(model, rows)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 40 == 0 or step == steps - 1:
            print(f"  step {step:3d}  loss {loss.item():.3f}")


def hard_loss(model, rows):
    return model(ids[rows], None, mask[rows], labels=y[rows])["loss"]


teacher_config = BertConfig(vocab_size=tok.vocab_size, max_position_embeddings=16, n_layer=4, n_head=2, n_embd=64)
teacher = BertForSequenceClassification(teacher_config, 2, rng=np.random.default_rng(1))
print("teacher:")
train_classifier(teacher, hard_loss, 160)
teacher_correct = classification_accuracy(teacher, test_ids, test_mask, y_test)
print(f"teacher accuracy {teacher_correct.mean():.1%} (negated sentences: {teacher_correct[negated].mean():.1%})")

# %% [markdown]
# ## Soft targets
#
# The teacher's probabilities for one sentence at three temperatures. At T = 1 they are nearly
# one-hot; a higher T spreads them and shows how sure the teacher really is.

# %%
with no_grad():
    t_logits = teacher(test_ids[:1], None, test_mask[:1])["logits"].data
print("sentence:", test[0].text, "| label", test[0].label)
for T in (1.0, 2.0, 5.0):
    p = F.softmax(Tensor(t_logits / T), axis=-1).data[0]
    print(f"  T = {T}:  p(negative) = {p[0]:.3f}   p(positive) = {p[1]:.3f}")

# %% [markdown]
# ## The student: one layer, initialised from the teacher
#
# `default_layer_map(N, M)` spreads M student layers over the teacher's N, from the first to the
# last (12 → 6 gives DistilBERT's [0, 2, 4, 7, 9, 11]; 4 → 2 gives [0, 3]; 4 → 1 gives [0]).
# `init_student_from_teacher` copies those layers and the embeddings. We train two copies of a
# one-layer student for the same number of steps: one with distillation (α_hard = α_soft = 0.5,
# T = 2), one on the labels alone.

# %%
layer_map = default_layer_map(4, 1)
student_config = StudentConfig(vocab_size=tok.vocab_size, max_position_embeddings=16, n_layer=1, n_head=2, n_embd=64)


def new_student():
    student = DistilStudent(student_config, 2, rng=np.random.default_rng(2))
    init_student_from_teacher(student.bert, teacher.bert, layer_map)
    student.classifier.load_state_dict(teacher.classifier.state_dict())
    return student


weights = DistillWeights(hard=0.5, soft=0.5, temperature=2.0)
student = new_student()
loss, terms = distill_objective(student, teacher, ids[:32], mask[:32], y[:32], weights)
print(f"teacher layers {layer_map}; first distillation loss {loss.item():.3f} = 0.5 × hard {terms['hard']:.3f}"
      f" + 0.5 × soft {terms['soft']:.3f}")
print("distilled student:")
train_classifier(student, lambda m, rows: distill_objective(m, teacher, ids[rows], mask[rows], y[rows], weights)[0], 60)
baseline = new_student()
print("student on the labels only:")
train_classifier(baseline, hard_loss, 60)

# %% [markdown]
# ## What distillation bought
#
# The student's accuracy as a share of the teacher's ("retained", DistilBERT reports 97%), and
# its size. A quarter of the layers keeps most of the accuracy; what it loses is on the negated
# sentences, where the meaning depends on two words together. In a run this short the soft
# targets change little (the teacher is nearly one-hot here, and labels are plentiful); they
# matter more when labels are scarce or the student is trained longer. Try T = 5, α_soft = 0.9,
# or two student layers (`minilm train distill` has all of these as options).

# %%
print(f"{'model':<28}{'parameters':>11}{'accuracy':>10}{'negated':>9}{'retained':>10}")
for name, model in (("teacher (4 layers)", teacher), ("student, distilled", student),
                    ("student, labels only", baseline)):
    correct = classification_accuracy(model, test_ids, test_mask, y_test)
    print(f"{name:<28}{inference_parameters(model):>11,}{correct.mean():>10.1%}{correct[negated].mean():>9.1%}"
          f"{correct.mean() / teacher_correct.mean():>10.1%}")
print(f"walkthrough finished in {time.perf_counter() - start:.1f} s")
