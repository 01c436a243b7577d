"""The special tokens a transformers tokenizer class has by default, for folders that do not name them.

bert-base-cased's ``tokenizer_config.json`` is ``{"do_lower_case": false, "model_max_length": 512}``
and roberta-base has none at all: transformers' ``AutoTokenizer`` then takes the class from
``config.json``'s ``model_type`` and the roles (``mask_token``, ``cls_token``, …) from that class's
``__init__`` defaults (``models/*/tokenization_*.py``). A folder's own ``tokenizer_config.json`` wins
role by role.
"""
from __future__ import annotations

import json
from pathlib import Path

_WORDPIECE = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
              "mask_token": "[MASK]"}
_FAIRSEQ = {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>",
            "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>"}
_DEBERTA = {"bos_token": "[CLS]", "eos_token": "[SEP]", **_WORDPIECE}
_ENDOFTEXT = "<|endoftext|>"

# model_type → the roles of its tokenizer class's defaults
DEFAULT_ROLES = {
    "bert": _WORDPIECE, "distilbert": _WORDPIECE, "electra": _WORDPIECE,
    "roberta": _FAIRSEQ, "bart": _FAIRSEQ,
    "gpt2": {"bos_token": _ENDOFTEXT, "eos_token": _ENDOFTEXT, "unk_token": _ENDOFTEXT},
    "t5": {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"},
    "xlnet": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "<sep>",
              "pad_token": "<pad>", "cls_token": "<cls>", "mask_token": "<mask>"},
    "deberta": _DEBERTA, "deberta-v2": _DEBERTA,
}


def default_roles(directory) -> dict[str, str]:
    """The roles transformers' class for ``directory``'s ``config.json`` ``model_type`` has by default
    ({} when the folder has no readable config or a model type not listed)."""
    try:
        config = json.loads((Path(directory) / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    kind = config.get("model_type") if isinstance(config, dict) else None
    return dict(DEFAULT_ROLES.get(kind, {})) if isinstance(kind, str) else {}
