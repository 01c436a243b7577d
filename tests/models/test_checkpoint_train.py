"""Checkpoints (atomic, no pickle, clear errors) and the shared training loop (exact resume)."""
import json

import numpy as np
import pytest

import autograd.functional as F
from autograd import nn
from autograd.errors import CheckpointError, ConfigError, TrainingError
from minilm.checkpoint import load_checkpoint, load_model, model_meta, save_checkpoint
from minilm.train import TrainConfig, fit, optimizer_for, short_run, train
from dataclasses import dataclass


@dataclass
class TinyConfig:
    n_in: int = 3
    n_out: int = 2


class Tiny(nn.Module):
    def __init__(self, config, *, rng):
        super().__init__()
        self.lin = nn.Linear(config.n_in, 8, rng=rng)
        self.out = nn.Linear(8, config.n_out, rng=rng)

    def forward(self, x):
        return self.out(self.lin(x).tanh())


class TinyRecipe:
    """Regression onto a fixed random linear map: enough to check the loop's bookkeeping."""
    family = "tiny"
    tokenizer = None

    def __init__(self, seed=0, lr_scale=1.0):
        self.model_config = TinyConfig()
        self.model = Tiny(self.model_config, rng=np.random.default_rng(seed))
        self.w = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32) * lr_scale
        self.xv = np.random.default_rng(2).standard_normal((64, 3)).astype(np.float32)

    def batch(self, rng):
        x = rng.standard_normal((16, 3)).astype(np.float32)
        return x, x @ self.w

    def loss(self, model, batch):
        x, y = batch
        return F.mse_loss(model(x), y), {"tokens": len(x)}

    def evaluate(self, model):
        return {"loss": F.mse_loss(model(self.xv), self.xv @ self.w).item()}

    def baselines(self):
        return {"zero_loss": float(np.mean((self.xv @ self.w) ** 2))}


def test_checkpoint_round_trip_and_model_rebuild(tmp_path):
    r = TinyRecipe()
    path = save_checkpoint(tmp_path / "c.npz", model=r.model, meta={"step": 3, **model_meta(r.model, r.model_config)})
    ck = load_checkpoint(path)
    assert ck["meta"]["step"] == 3
    for k, v in r.model.state_dict().items():
        np.testing.assert_array_equal(ck["model"][k], v)
    model, tok, meta = load_model(path)
    assert tok is None and not model.training
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(model(x).data, r.model(x).data)


def test_a_classifier_comes_back_with_its_own_classes_and_pooling(tmp_path):
    from minilm.models.bert import BertConfig
    from minilm.models.bert_heads import BertForSequenceClassification
    cfg = BertConfig(vocab_size=30, max_position_embeddings=8, n_layer=1, n_head=2, n_embd=8, dropout=0.0)
    clf = BertForSequenceClassification(cfg, 3, rng=np.random.default_rng(1), pool="mean")
    path = save_checkpoint(tmp_path / "clf.npz", model=clf, meta=model_meta(clf, cfg))
    model, _, meta = load_model(path)
    assert (model.num_labels, model.pool) == (3, "mean") and meta["model_kwargs"] == {"num_labels": 3, "pool": "mean"}
    ids, mask = np.array([[2, 5, 7, 0]]), np.array([[1, 1, 1, 0]], dtype=bool)
    clf.eval()
    np.testing.assert_array_equal(model(ids, None, mask)["logits"].data, clf(ids, None, mask)["logits"].data)
    bad = save_checkpoint(tmp_path / "bad.npz", model=clf, meta={**meta, "model_kwargs": {"rng": 1}})
    with pytest.raises(CheckpointError, match="model_kwargs"):
        load_model(bad)


@pytest.mark.parametrize("meta, refused", [
    ({"config_class": "os:system", "config": {"command": "touch {marker}"}}, "expected a dataclass"),
    ({"config_class": "subprocess:CompletedProcess"}, "expected a dataclass"),
    ({"model_class": "minilm.checkpoint:load_model"}, "expected a subclass of autograd.nn.Module"),
    ({"config_class": "antigravity:X"}, "refusing to import it"),     # importing it would open a browser
    ({"config": ["not", "a", "dict"]}, "expected a dict"),
    ({"config": {"no_such_field": 1}}, "does not fit"),
])
def test_a_checkpoints_meta_never_decides_what_code_runs(tmp_path, meta, refused):
    """A checkpoint from someone else is data: the classes its meta names must be configs and
    modules, from minilm (or already imported), or load_model refuses it before calling anything."""
    r = TinyRecipe()
    marker = tmp_path / "ran"
    good = model_meta(r.model, r.model_config)
    meta = {k: (json.loads(json.dumps(v).replace("{marker}", str(marker))) if k == "config" else v)
            for k, v in meta.items()}
    path = save_checkpoint(tmp_path / "evil.npz", model=r.model, meta={**good, **meta})
    with pytest.raises(CheckpointError, match=refused):
        load_model(path)
    assert not marker.exists(), "the checkpoint ran a command"


@pytest.mark.parametrize("name", ["wordpiece", "os", ["WordPieceTokenizer"], None])
def test_a_checkpoints_tokenizer_class_is_a_tokenizer_class(name):
    from minilm.checkpoint import restore_tokenizer
    with pytest.raises(CheckpointError, match="unknown tokenizer class"):
        restore_tokenizer({"tokenizer_files": {"vocab.txt": "[PAD]\n"}, "meta": {"tokenizer_class": name}})


def test_corrupted_checkpoint_is_a_clear_error_and_keeps_the_old_one(tmp_path):
    r = TinyRecipe()
    path = save_checkpoint(tmp_path / "c.npz", model=r.model, meta={})
    good = path.read_bytes()
    bad = tmp_path / "bad.npz"
    bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(CheckpointError, match="bad.npz"):
        load_checkpoint(bad)
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all")
    with pytest.raises(CheckpointError, match="junk.npz"):
        load_checkpoint(tmp_path / "junk.npz")
    with pytest.raises(CheckpointError, match="no such file"):
        load_checkpoint(tmp_path / "missing.npz")
    # a save that fails half-way leaves the previous checkpoint intact and no temporary file
    class Boom(Exception):
        pass

    class Exploding:
        def state_dict(self):
            raise Boom
    with pytest.raises(Boom):
        save_checkpoint(path, model=Exploding(), meta={})
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.npz", "c.npz", "junk.npz"]


def test_checkpoint_has_no_pickle(tmp_path):
    r = TinyRecipe()
    path = save_checkpoint(tmp_path / "c.npz", model=r.model, meta={"a": [1, 2]})
    with np.load(path, allow_pickle=False) as z:  # would raise if any entry needed pickle
        assert all(z[k].dtype != object for k in z.files)


def test_training_reduces_loss_and_resume_is_exact(tmp_path):
    cfg = TrainConfig(steps=40, lr=1e-2, warmup=5, eval_every=10, checkpoint_every=10, seed=3)
    full = train(TinyRecipe(), cfg, tmp_path / "full", progress=False, plot=False)
    assert full["final_loss"] < 0.5 * full["initial_loss"]
    # a run that stops after 20 of its 40 steps, then resumes: the curve equals the uninterrupted one
    part = tmp_path / "part"
    train_partial(TinyRecipe(), cfg, part, stop_after=20)
    resumed = train(TinyRecipe(), cfg, part, resume=True, progress=False, plot=False)
    h_full = json.loads((tmp_path / "full" / "history.json").read_text())
    h_res = json.loads((part / "history.json").read_text())
    assert h_res["loss"] == h_full["loss"]
    assert resumed["final_loss"] == full["final_loss"]


def train_partial(recipe, cfg, out, stop_after):
    """Run the loop but raise after ``stop_after`` steps, as a crash would."""
    calls = {"n": 0}
    original = recipe.batch

    def batch(rng):
        if calls["n"] == stop_after:
            raise KeyboardInterrupt
        calls["n"] += 1
        return original(rng)
    recipe.batch = batch
    with pytest.raises(KeyboardInterrupt):
        train(recipe, cfg, out, progress=False, plot=False)


def test_non_finite_loss_names_the_step(tmp_path):
    r = TinyRecipe()
    r.loss = lambda model, batch: (F.mse_loss(model(batch[0]), batch[1]) * float("nan"), {})
    with pytest.raises(TrainingError, match="step 0"):
        train(r, TrainConfig(steps=5, eval_every=5, checkpoint_every=5), tmp_path, progress=False, plot=False)


def test_fit_runs_the_same_loop_as_train(tmp_path):
    """fit (a bare loss, no recipe) and train draw the same batches and take the same steps."""
    cfg = TrainConfig(steps=6, warmup=2, eval_every=6, checkpoint_every=6, seed=3)
    train(TinyRecipe(), cfg, tmp_path, progress=False, plot=False)
    trained = json.loads((tmp_path / "history.json").read_text())["loss"]
    r = TinyRecipe()
    assert fit(r.model, lambda rng: r.loss(r.model, r.batch(rng))[0], cfg, name="tiny") == trained


def test_schedules_cosine_and_linear():
    model = TinyRecipe().model
    for cfg, last in ((TrainConfig(steps=10, lr=1.0, warmup=2), 0.1), (short_run(10, 1.0, seed=0), 0.0)):
        opt, schedule = optimizer_for(model, cfg)
        lrs = []
        for _ in range(cfg.steps):
            lrs.append(opt.param_groups[0]["lr"])
            schedule.step()
        assert lrs[0] == 0.0 and max(lrs) == pytest.approx(1.0), f"{cfg.schedule}: warm up from 0 to the peak lr"
        assert opt.param_groups[0]["lr"] == pytest.approx(last), f"{cfg.schedule}: ends at {last} of the peak"
    assert short_run(10, 1.0, seed=0).warmup == 1                      # 10% of the steps
    with pytest.raises(ConfigError, match="schedule"):
        TrainConfig(schedule="step")


def test_resume_accepts_a_checkpoint_saved_before_a_field_was_added(tmp_path):
    cfg = TrainConfig(steps=4, eval_every=2, checkpoint_every=2)
    first = train(TinyRecipe(), cfg, tmp_path, progress=False, plot=False)
    ck = load_checkpoint(tmp_path / "checkpoint.npz")
    meta = dict(ck["meta"])
    del meta["train_config"]["schedule"]                                # as written before `schedule` existed
    r = TinyRecipe()
    r.model.load_state_dict(ck["model"])
    opt, _ = optimizer_for(r.model, cfg)
    opt.load_state_dict(ck["optim"])
    save_checkpoint(tmp_path / "checkpoint.npz", model=r.model, meta=meta, optimizer=opt)
    again = train(TinyRecipe(), cfg, tmp_path, resume=True, progress=False, plot=False)  # the default fills it in
    assert again["final_loss"] == first["final_loss"]
