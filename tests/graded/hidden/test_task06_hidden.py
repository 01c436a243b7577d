"""Held-back tests of module 6: BPE merges where rank, not position, decides."""
import pytest


@pytest.mark.hidden
@pytest.mark.task6_2
def test_bpe_merge_rank_order_and_repeats(impl):
    bpe_merge = impl("task06_roberta.bpe").bpe_merge
    ranks = {("c", "d"): 0, ("b", "c"): 1, ("a", "b"): 2, ("cd", "cd"): 3, ("ab", "cdcd"): 4}
    got = bpe_merge("abcdcd", ranks)
    assert got == ["abcdcd"], (
        f"bpe_merge('abcdcd') gave {got}, expected ['abcdcd']: c d (rank 0) merges everywhere first → a b cd cd; "
        f"then ab (rank 2; b c no longer exists), cd cd (3), ab cdcd (4) — always the lowest-ranked adjacent pair")
    got = bpe_merge("bbbbb", {("b", "b"): 0})
    assert got == ["bb", "bb", "b"], (
        f"bpe_merge('bbbbb', {{(b, b): 0}}) gave {got}, expected ['bb', 'bb', 'b']: merge every (b, b) left to "
        f"right without overlap; afterwards (bb, bb) and (bb, b) have no rank, so the loop stops")
