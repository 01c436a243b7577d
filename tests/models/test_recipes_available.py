"""``minilm.recipes.available()``: every family of the registry, or an error that names the broken one
(a family whose module fails to import must not silently vanish from ``minilm train``)."""
import pytest

from autograd.errors import MiniLMError
from minilm import recipes


def test_every_registered_family_is_available():
    assert list(recipes.available()) == list(recipes.FAMILIES)


def test_a_family_that_fails_to_import_is_an_error_naming_it(tmp_path, monkeypatch):
    (tmp_path / "broken_bert_recipe.py").write_text("import a_dependency_that_is_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(recipes.FAMILIES, "bert", "broken_bert_recipe")
    with pytest.raises(MiniLMError) as info:
        recipes.available()
    message = str(info.value)
    assert "'bert'" in message and "broken_bert_recipe" in message, message
    assert "No module named 'a_dependency_that_is_not_installed'" in message, message
    assert isinstance(info.value.__cause__, ImportError)


def test_the_train_command_reports_it_too(tmp_path, monkeypatch):
    from minilm.cli import build_parser
    monkeypatch.setitem(recipes.FAMILIES, "gpt", "minilm.recipes.no_such_module")
    with pytest.raises(MiniLMError, match=r"family 'gpt' .*minilm\.recipes\.no_such_module failed to import"):
        build_parser()


def test_an_experiment_that_fails_to_import_is_an_error_naming_it(monkeypatch):
    from minilm import experiments
    monkeypatch.setitem(experiments.EXPERIMENTS, "masking", "minilm.experiments.no_such_module")
    with pytest.raises(MiniLMError, match=r"experiment 'masking' .*no_such_module failed to import"):
        experiments.available()
