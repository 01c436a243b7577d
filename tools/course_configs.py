"""The config.json of each public checkpoint that docs/pretrained.md names, as the hub serves it
(transcribed field for field from each repository's main branch), and the fields that
tools/make_course_fixtures.py shrinks to make its miniature. Every other field is kept as it is,
including the ones a loader must tolerate (``gradient_checkpointing``, ``task_specific_params``,
``"pos_att_type": "p2c|c2p"`` as a string, BART's ``"architectures": ["BartModel"]``, …).
"""
from __future__ import annotations

BERT_BASE_CASED = {
    "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": False,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02,
    "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
    "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0, "position_embedding_type": "absolute",
    "transformers_version": "4.6.0.dev0", "type_vocab_size": 2, "use_cache": True, "vocab_size": 28996}

ROBERTA_BASE = {
    "architectures": ["RobertaForMaskedLM"], "attention_probs_dropout_prob": 0.1, "bos_token_id": 0,
    "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768,
    "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-05, "max_position_embeddings": 514,
    "model_type": "roberta", "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 1,
    "type_vocab_size": 1, "vocab_size": 50265}

DISTILBERT_BASE_UNCASED = {
    "activation": "gelu", "architectures": ["DistilBertForMaskedLM"], "attention_dropout": 0.1, "dim": 768,
    "dropout": 0.1, "hidden_dim": 3072, "initializer_range": 0.02, "max_position_embeddings": 512,
    "model_type": "distilbert", "n_heads": 12, "n_layers": 6, "pad_token_id": 0, "qa_dropout": 0.1,
    "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False, "tie_weights_": True,
    "transformers_version": "4.10.0.dev0", "vocab_size": 30522}

_ELECTRA_SMALL = {
    "attention_probs_dropout_prob": 0.1, "embedding_size": 128, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 256, "initializer_range": 0.02, "intermediate_size": 1024, "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512, "model_type": "electra", "num_attention_heads": 4, "num_hidden_layers": 12,
    "pad_token_id": 0, "type_vocab_size": 2, "vocab_size": 30522}
ELECTRA_SMALL_DISCRIMINATOR = {"architectures": ["ElectraForPreTraining"], **_ELECTRA_SMALL}
ELECTRA_SMALL_GENERATOR = {"architectures": ["ElectraForMaskedLM"], **_ELECTRA_SMALL}

_T5_TASKS = {
    "summarization": {"early_stopping": True, "length_penalty": 2.0, "max_length": 200, "min_length": 30,
                      "no_repeat_ngram_size": 3, "num_beams": 4, "prefix": "summarize: "},
    "translation_en_to_de": {"early_stopping": True, "max_length": 300, "num_beams": 4,
                             "prefix": "translate English to German: "},
    "translation_en_to_fr": {"early_stopping": True, "max_length": 300, "num_beams": 4,
                             "prefix": "translate English to French: "},
    "translation_en_to_ro": {"early_stopping": True, "max_length": 300, "num_beams": 4,
                             "prefix": "translate English to Romanian: "}}
T5_SMALL = {
    "architectures": ["T5ForConditionalGeneration"], "d_ff": 2048, "d_kv": 64, "d_model": 512,
    "decoder_start_token_id": 0, "dropout_rate": 0.1, "eos_token_id": 1, "initializer_factor": 1.0,
    "is_encoder_decoder": True, "layer_norm_epsilon": 1e-06, "model_type": "t5", "n_positions": 512,
    "num_heads": 8, "num_layers": 6, "output_past": True, "pad_token_id": 0, "relative_attention_num_buckets": 32,
    "task_specific_params": _T5_TASKS, "vocab_size": 32128}
FLAN_T5_SMALL = {
    "architectures": ["T5ForConditionalGeneration"], "d_ff": 1024, "d_kv": 64, "d_model": 512,
    "decoder_start_token_id": 0, "dense_act_fn": "gelu_new", "dropout_rate": 0.1, "eos_token_id": 1,
    "feed_forward_proj": "gated-gelu", "initializer_factor": 1.0, "is_encoder_decoder": True, "is_gated_act": True,
    "layer_norm_epsilon": 1e-06, "model_type": "t5", "n_positions": 512, "num_decoder_layers": 8, "num_heads": 6,
    "num_layers": 8, "output_past": True, "pad_token_id": 0, "relative_attention_max_distance": 128,
    "relative_attention_num_buckets": 32, "task_specific_params": _T5_TASKS, "tie_word_embeddings": False,
    "transformers_version": "4.23.1", "use_cache": True, "vocab_size": 32128}

BART_BASE = {
    "activation_dropout": 0.1, "activation_function": "gelu", "add_bias_logits": False,
    "add_final_layer_norm": False, "architectures": ["BartModel"], "attention_dropout": 0.1, "bos_token_id": 0,
    "classif_dropout": 0.1, "classifier_dropout": 0.0, "d_model": 768, "decoder_attention_heads": 12,
    "decoder_ffn_dim": 3072, "decoder_layerdrop": 0.0, "decoder_layers": 6, "decoder_start_token_id": 2,
    "dropout": 0.1, "early_stopping": True, "encoder_attention_heads": 12, "encoder_ffn_dim": 3072,
    "encoder_layerdrop": 0.0, "encoder_layers": 6, "eos_token_id": 2, "forced_bos_token_id": 0,
    "forced_eos_token_id": 2, "gradient_checkpointing": False, "id2label": {"0": "LABEL_0", "1": "LABEL_1",
                                                                            "2": "LABEL_2"},
    "init_std": 0.02, "is_encoder_decoder": True, "label2id": {"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2},
    "max_position_embeddings": 1024, "model_type": "bart", "no_repeat_ngram_size": 3, "normalize_before": False,
    "normalize_embedding": True, "num_beams": 4, "num_hidden_layers": 6, "pad_token_id": 1,
    "scale_embedding": False, "transformers_version": "4.12.0.dev0", "use_cache": True, "vocab_size": 50265}

DEBERTA_BASE = {
    "model_type": "deberta", "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072, "max_position_embeddings": 512,
    "relative_attention": True, "pos_att_type": "c2p|p2c", "layer_norm_eps": 1e-7, "max_relative_positions": -1,
    "position_biased_input": False, "num_attention_heads": 12, "num_hidden_layers": 12, "type_vocab_size": 0,
    "vocab_size": 50265}

DEBERTA_V3_SMALL = {
    "model_type": "deberta-v2", "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
    "max_position_embeddings": 512, "relative_attention": True, "position_buckets": 256,
    "norm_rel_ebd": "layer_norm", "share_att_key": True, "pos_att_type": "p2c|c2p", "layer_norm_eps": 1e-7,
    "max_relative_positions": -1, "position_biased_input": False, "num_attention_heads": 12,
    "num_hidden_layers": 6, "type_vocab_size": 0, "vocab_size": 128100}

XLNET_BASE_CASED = {
    "architectures": ["XLNetLMHeadModel"], "attn_type": "bi", "bi_data": False, "bos_token_id": 1,
    "clamp_len": -1, "d_head": 64, "d_inner": 3072, "d_model": 768, "dropout": 0.1, "end_n_top": 5,
    "eos_token_id": 2, "ff_activation": "gelu", "initializer_range": 0.02, "layer_norm_eps": 1e-12,
    "mem_len": None, "model_type": "xlnet", "n_head": 12, "n_layer": 12, "pad_token_id": 5, "reuse_len": None,
    "same_length": False, "start_n_top": 5, "summary_activation": "tanh", "summary_last_dropout": 0.1,
    "summary_type": "last", "summary_use_proj": True,
    "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 250}}, "untie_r": True,
    "use_mems_eval": True, "use_mems_train": False, "vocab_size": 32000}

GPT2 = {
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
    "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12,
    "n_positions": 1024, "resid_pdrop": 0.1, "summary_activation": None, "summary_first_dropout": 0.1,
    "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
    "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}}, "vocab_size": 50257}

# the sizes each miniature shrinks (the vocabulary's size and special ids come from its tokenizer)
_ENC = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
        "max_position_embeddings": 40}
SHRINK = {
    "bert-base-cased": _ENC,
    "roberta-base": {**_ENC, "max_position_embeddings": 42},
    "distilbert-base-uncased": {"dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64,
                                "max_position_embeddings": 40},
    "google/electra-small-discriminator": {**_ENC, "embedding_size": 16},
    "google/electra-small-generator": {**_ENC, "embedding_size": 16},
    "t5-small": {"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_heads": 4,
                 "relative_attention_num_buckets": 8},
    "google/flan-t5-small": {"d_model": 32, "d_kv": 16, "d_ff": 48, "num_layers": 2, "num_decoder_layers": 2,
                             "num_heads": 3, "relative_attention_num_buckets": 8,
                             "relative_attention_max_distance": 16},
    "facebook/bart-base": {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
                           "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
                           "num_hidden_layers": 2, "max_position_embeddings": 40},
    "microsoft/deberta-base": {**_ENC, "intermediate_size": 48, "initializer_range": 0.2},
    "microsoft/deberta-v3-small": {**_ENC, "intermediate_size": 48, "position_buckets": 4,
                                   "initializer_range": 0.2},
    "xlnet-base-cased": {"d_model": 16, "d_head": 8, "d_inner": 32, "n_layer": 2, "n_head": 2},
    "gpt2": {"n_embd": 32, "n_head": 4, "n_layer": 2, "n_positions": 32, "n_ctx": 32},
}

CONFIGS = {
    "bert-base-cased": BERT_BASE_CASED, "roberta-base": ROBERTA_BASE, "distilbert-base-uncased":
    DISTILBERT_BASE_UNCASED, "google/electra-small-discriminator": ELECTRA_SMALL_DISCRIMINATOR,
    "google/electra-small-generator": ELECTRA_SMALL_GENERATOR, "t5-small": T5_SMALL,
    "google/flan-t5-small": FLAN_T5_SMALL, "facebook/bart-base": BART_BASE, "microsoft/deberta-base": DEBERTA_BASE,
    "microsoft/deberta-v3-small": DEBERTA_V3_SMALL, "xlnet-base-cased": XLNET_BASE_CASED, "gpt2": GPT2,
}
