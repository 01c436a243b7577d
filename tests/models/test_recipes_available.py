"""``minilm.recipes.available()``: every recipe registered with ``@recipe``, or an error that names the
broken module (a family whose module fails to import must not silently vanish from ``minilm train``)."""
import sys

import pytest

from autograd.errors import MiniLMError
from minilm import recipes

FAMILIES = ["gpt", "bert", "roberta", "electra", "xlnet", "bart", "prefixlm", "t5", "distill", "deberta",
            "transformer-xl"]  # the course's order: chapter (Task N), then name


def test_every_recipe_module_registers_its_family_in_course_order():
    families = recipes.available()
    assert list(families) == FAMILIES
    for family, recipe in families.items():
        assert recipe.family == family and recipe.Config.__name__.endswith("RecipeConfig"), family
        assert recipes.get(family) is recipe
    with pytest.raises(MiniLMError, match="no recipe 'gtp'; the families are gpt, bert"):
        recipes.get("gtp")


def test_a_recipe_module_that_fails_to_import_is_an_error_naming_it(tmp_path, monkeypatch):
    """A module of minilm/recipes/ that cannot import (here: a missing dependency) stops
    ``available()`` with its name and the import error."""
    (tmp_path / "broken_family.py").write_text("import a_dependency_that_is_not_installed\n")
    monkeypatch.setattr(recipes, "__path__", [*recipes.__path__, str(tmp_path)])
    with pytest.raises(MiniLMError) as info:
        recipes.available()
    message = str(info.value)
    assert "'broken_family'" in message and "minilm.recipes.broken_family" in message, message
    assert "No module named 'a_dependency_that_is_not_installed'" in message, message
    assert isinstance(info.value.__cause__, ImportError)


def test_the_train_command_reports_it_too(tmp_path, monkeypatch):
    from minilm.cli import build_parser
    (tmp_path / "broken_family.py").write_text("import a_dependency_that_is_not_installed\n")
    monkeypatch.setattr(recipes, "__path__", [*recipes.__path__, str(tmp_path)])
    with pytest.raises(MiniLMError, match=r"recipe module 'broken_family' .*failed to import"):
        build_parser()


def test_two_recipes_cannot_claim_one_family():
    with pytest.raises(MiniLMError, match="two recipes claim the family 'gpt'"):
        @recipes.recipe("gpt", config=recipes.get("gpt").Config, chapter=4)
        class Another:
            pass


def test_an_experiment_that_fails_to_import_is_an_error_naming_it(monkeypatch):
    from minilm import experiments
    monkeypatch.setitem(experiments.EXPERIMENTS, "masking", "minilm.experiments.no_such_module")
    with pytest.raises(MiniLMError, match=r"experiment 'masking' .*no_such_module failed to import"):
        experiments.available()
