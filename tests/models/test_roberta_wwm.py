"""RoBERTa's whole-word masking: byte-level BPE words (``minilm/corruption/roberta_wwm.py``) and
``minilm train roberta --whole-word-mask`` (``minilm/recipes/roberta.py``)."""
import json
from dataclasses import replace

import numpy as np
import pytest

from autograd.errors import ShapeError
from minilm.corruption import bpe_word_starts, roberta_whole_word_mask
from minilm.recipes.config import override

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
MASK, PAD, NSPECIAL, V = 4, 1, 5, 50


def test_word_starts_follow_the_space_mark_and_the_special_tokens():
    tokens = ["<s>", "the", "Ġfar", "mer", "Ġ", "o", "v", "Ġ.", "</s>", "ri", "ce", "Ġ.", "<mask>", "s"]
    expected = [1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1]
    assert bpe_word_starts(tokens, SPECIALS).tolist() == [bool(e) for e in expected]
    assert bpe_word_starts(["cat", "s"]).tolist() == [True, False]    # the first token begins a word
    assert bpe_word_starts([]).shape == (0,)
    with pytest.raises(ShapeError, match="token strings"):
        bpe_word_starts([3, 4])


def _words(starts):
    bounds = list(np.flatnonzero(starts)) + [len(starts)]
    return [np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def test_no_word_is_ever_partly_masked_and_every_word_is_drawn_at_rate_p():
    """10,000 draws on one sequence of words of 1 to 4 tokens (specials included)."""
    lengths = [1, 3, 1, 2, 4, 1, 1, 2, 3, 1, 2, 1, 4, 1, 1]          # W = 15 words, T = 28 tokens
    starts = np.concatenate([[True] + [False] * (n - 1) for n in lengths])
    ids = np.random.default_rng(1).integers(NSPECIAL, V, size=len(starts))
    ids[0] = 0                                                      # <s>: a word of its own, maskable
    words = _words(starts)
    rng = np.random.default_rng(0)
    n, p = 10_000, 0.15
    drawn = np.zeros(len(words))
    outcome = {"mask": 0, "kept": 0, "random": 0}
    counts = []
    for _ in range(n):
        inputs, targets = roberta_whole_word_mask(ids, starts, mask_id=MASK, vocab_size=V, nspecial=NSPECIAL,
                                                  rng=rng, prob=p, pad_id=PAD)
        masked = targets != PAD
        assert np.array_equal(targets[masked], ids[masked])
        assert np.array_equal(inputs[~masked], ids[~masked])         # nothing else changes
        k = 0
        for w, pos in enumerate(words):
            assert masked[pos].all() or not masked[pos].any(), "a word was partly masked"
            if masked[pos[0]]:
                k += 1
                drawn[w] += 1
                is_mask = inputs[pos] == MASK
                assert is_mask.all() or not is_mask.any(), "a word was partly replaced by <mask>"
                if is_mask.all():
                    outcome["mask"] += 1
                elif np.array_equal(inputs[pos], ids[pos]):
                    outcome["kept"] += 1       # (a random word equal to the original counts here; rare)
                else:
                    assert ((inputs[pos] >= NSPECIAL) & (inputs[pos] < V)).all()
                    outcome["random"] += 1
        counts.append(k)
    W = len(words)
    assert set(counts) <= {int(np.floor(p * W)), int(np.ceil(p * W))}   # int(p·W + U): floor or ceil
    assert abs(np.mean(counts) - p * W) < 4 * np.std(counts) / np.sqrt(n) + 1e-9
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(drawn / n - p) < 4.5 * se), drawn / n   # long and short words alike
    total = sum(outcome.values())
    for key, share in (("mask", 0.8), ("kept", 0.1), ("random", 0.1)):
        assert abs(outcome[key] / total - share) < 4 * np.sqrt(share * (1 - share) / total) + 0.002, outcome


def test_validation_and_purity():
    ids = np.array([0, 7, 8, 9])
    starts = np.array([True, True, False, True])
    before = ids.copy()
    inputs, targets = roberta_whole_word_mask(ids, starts, mask_id=MASK, vocab_size=V, nspecial=NSPECIAL,
                                              rng=np.random.default_rng(0), prob=1.0)
    assert np.array_equal(ids, before) and inputs is not ids
    assert (targets != PAD).all()                                     # prob 1: every word
    with pytest.raises(ShapeError, match="word_starts"):
        roberta_whole_word_mask(ids, starts[:3], mask_id=MASK, vocab_size=V, nspecial=NSPECIAL,
                                rng=np.random.default_rng(0))
    with pytest.raises(ShapeError, match="word_starts"):
        roberta_whole_word_mask(ids, starts.astype(int), mask_id=MASK, vocab_size=V, nspecial=NSPECIAL,
                                rng=np.random.default_rng(0))
    empty = roberta_whole_word_mask(np.zeros(0, np.int64), np.zeros(0, bool), mask_id=MASK, vocab_size=V,
                                    nspecial=NSPECIAL, rng=np.random.default_rng(0))
    assert empty[0].shape == (0,) and empty[1].shape == (0,)


@pytest.fixture(scope="module")
def recipes():
    from minilm.recipes.roberta import RobertaRecipe, RobertaRecipeConfig
    small = dict(docs=40, vocab_size=400, tokens_per_sample=48)
    return RobertaRecipe(override(RobertaRecipeConfig(), **small)), RobertaRecipe(override(RobertaRecipeConfig(), whole_word_mask=True, **small))


def test_recipe_packs_the_same_blocks(recipes):
    plain, wwm = recipes
    assert len(plain.train_blocks) == len(wwm.train_blocks)
    assert all(np.array_equal(a, b) for a, b in zip(plain.train_blocks, wwm.train_blocks))
    assert len(wwm.train_word_starts) == len(wwm.train_blocks)
    assert not plain.whole_word and wwm.whole_word


def _check_whole_words(tokens, masked, special, tally):
    """Checked against the token strings alone: a token without "Ġ" continues the word before it unless
    it is special, follows a special token, or follows the "Ġ." that ends every synthetic sentence (it
    then begins a sentence). ``tally`` counts masked sentence ends and how often the next word differed."""
    for t in range(1, len(tokens)):
        prev, cur = tokens[t - 1], tokens[t]
        sentence_start = prev == "Ġ." and not cur.startswith("Ġ") and cur not in special
        if not (cur.startswith("Ġ") or cur in special or prev in special or sentence_start):
            assert masked[t] == masked[t - 1], (tokens, masked)
        elif sentence_start:
            tally[0] += masked[t - 1]
            tally[1] += masked[t - 1] != masked[t]


def test_recipe_never_masks_part_of_a_word(recipes):
    """10,000 masked blocks from the recipe's dataset (every block, many epochs)."""
    from minilm.recipes.common import load_documents
    from minilm.recipes.roberta import RobertaRecipeConfig
    _, wwm = recipes
    tok = wwm.tokenizer
    train_docs, _ = load_documents(override(RobertaRecipeConfig(), docs=40))
    assert all(s.endswith(" .") for d in train_docs for s in d)       # what the check relies on
    special = set(tok.special_tokens)
    N = len(wwm.train_blocks)
    draws, tally = 0, [0, 0]
    for epoch in range(10_000 // N + 1):
        for index in range(N):
            inputs, targets = wwm.data.get(index, epoch)
            tokens = tok.convert_ids_to_tokens(wwm.train_blocks[index].tolist())
            _check_whole_words(tokens, targets != tok.pad_id, special, tally)
            draws += 1
    assert draws >= 10_000
    # a sentence's first word is a word of its own, not glued to the "Ġ." before it
    masked_sentence_ends, split = tally
    assert masked_sentence_ends > 100 and split > 0.5 * masked_sentence_ends


def test_recipe_static_and_held_out_masks_are_whole_words(recipes):
    from minilm.recipes.roberta import RobertaRecipe, RobertaRecipeConfig
    static = RobertaRecipe(override(RobertaRecipeConfig(), whole_word_mask=True, masking="static", static_copies=3, docs=20,
                           vocab_size=400, tokens_per_sample=48))
    tok, tally = static.tokenizer, [0, 0]
    special = set(tok.special_tokens)
    for index in range(len(static.train_blocks)):
        copies = [static.data.get(index, epoch)[1] for epoch in range(3)]
        assert any(not np.array_equal(copies[0], c) for c in copies[1:])   # the copies differ
        for targets in copies:
            _check_whole_words(tok.convert_ids_to_tokens(static.train_blocks[index].tolist()),
                               targets != tok.pad_id, special, tally)
    _, dyn = recipes
    val = dyn.val
    for inputs, labels, real in zip(val["input_ids"], val["labels"], val["attention_mask"].astype(bool)):
        masked = labels[real] != -100
        original = np.where(masked, labels[real], inputs[real])
        _check_whole_words(dyn.tokenizer.convert_ids_to_tokens(original.tolist()), masked, special, tally)
    assert 0.05 < (val["labels"] != -100).sum() / val["attention_mask"].sum() < 0.3


@pytest.mark.slow
def test_train_roberta_whole_word_mask_cli(tmp_path, capsys):
    from minilm.cli import main
    assert main(["train", "roberta", "--whole-word-mask", "--steps", "200", "--docs", "60", "--out",
                 str(tmp_path), "--json", "--no-progress"]) == 0
    s = json.loads(capsys.readouterr().out)
    # measured: held-out loss 6.41 -> 4.30 (unigram 4.62); MLM accuracy 15.7% (most frequent token 12.9%)
    assert s["final_loss"] < s["initial_loss"] - 1.0
    assert s["final_loss"] < s["baselines"]["unigram_loss"]


def test_whole_word_masking_runs_the_task_6_1_slots():
    """The word-level choice is Task 6.1's mask_plan, applied to the tokens by apply_mask_plan: no copy."""
    from autograd import tasks
    tokens = ["<s>", "the", "Ġcat", "Ġsat", "Ġon", "Ġmat", "ress", "</s>"]
    ids = np.arange(len(tokens)) + 5
    with tasks.trace() as seen:
        roberta_whole_word_mask(ids, bpe_word_starts(tokens, ["<s>", "</s>"]), mask_id=4, vocab_size=40,
                                nspecial=5, rng=np.random.default_rng(0), prob=0.5)
    assert {("task06_roberta.masking", "mask_plan"), ("task06_roberta.masking", "apply_mask_plan")} <= seen
