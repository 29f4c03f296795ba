"""Convert a BERT sentence-embedding checkpoint (safetensors + tokenizer.json) into an f16 GGUF.

Torch-free and deterministic: the same input files always give the same bytes, so the output's
SHA256 can be pinned in the model manifest. The layout follows llama.cpp's own converter for BERT
(``convert_hf_to_gguf.py``: WordPiece vocab in "phantom space" form, mean pooling from the
sentence-transformers config, 1-D tensors kept in f32), plus ``tokenizer.ggml.normalizer.lowercase``,
which the PyPI ``gguf`` writer does not add and without which llama.cpp matches uppercase words
against an uncased vocabulary.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError

# llama.cpp pre-tokenizer name its converter derives for the bert-base-uncased vocabulary.
_PRE_TOKENIZER = "jina-v2-en"
# Added to f32 activations by llama.cpp's BERT graph, which has no f32+f16 add on the CPU.
_F32_TENSORS = ("position_embd.weight", "token_types.weight")
_SKIPPED = ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias")


def _read_json(path: Path) -> Any:
    """The JSON document in ``path`` (an object or a list, as the model's files hold)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"Cannot read {path} to build the embedding model: {exc}.") from exc


def _pooling_type(model_dir: Path) -> int:
    import gguf

    modules = model_dir / "modules.json"
    if not modules.is_file():
        return int(gguf.PoolingType.MEAN)
    for module in _read_json(modules):
        if module["type"].endswith("Pooling"):
            config = _read_json(model_dir / module["path"] / "config.json")
            if config.get("pooling_mode_cls_token"):
                return int(gguf.PoolingType.CLS)
            return int(gguf.PoolingType.MEAN)
    return int(gguf.PoolingType.MEAN)


def _vocabulary(model_dir: Path, vocab_size: int) -> tuple[list[str], list[int]]:
    import gguf

    tokenizer = _read_json(model_dir / "tokenizer.json")
    if tokenizer.get("model", {}).get("type") != "WordPiece":
        raise ModelError("Only WordPiece (BERT) tokenizers can be converted.")
    by_id = {i: tok for tok, i in tokenizer["model"]["vocab"].items()}
    special = {t["content"] for t in tokenizer.get("added_tokens", []) if t.get("special")}
    tokens: list[str] = []
    types: list[int] = []
    for i in range(vocab_size):
        tok = by_id.get(i)
        if tok is None:
            tokens.append(f"[PAD{i}]")
            types.append(int(gguf.TokenType.UNUSED))
        elif tok in special:
            tokens.append(tok)
            types.append(int(gguf.TokenType.CONTROL))
        else:
            # llama.cpp's WordPiece expects word-initial pieces prefixed with U+2581 and
            # continuation pieces without their "##".
            tokens.append(tok[2:] if tok.startswith("##") else "\u2581" + tok)
            types.append(int(gguf.TokenType.NORMAL))
    return tokens, types


def convert_bert_to_gguf(model_dir: Path, out_path: Path, name: str, *, f32: bool = False) -> None:
    """Write ``model_dir`` (config.json, model.safetensors, tokenizer.json) as an f16 GGUF at ``out_path``
    (with ``f32``, every tensor in f32: the checkpoint's own precision, which the ingest benchmark compares).

    ``out_path`` is written directly; callers write to a temporary path and rename.

    Raises:
        ModelError: the checkpoint is not a BERT model or a file is missing or unreadable.
    """
    import gguf
    from safetensors.numpy import load_file

    config = _read_json(model_dir / "config.json")
    if "BertModel" not in config.get("architectures", []):
        raise ModelError(f"{model_dir} does not hold a BertModel checkpoint.")
    n_layers = int(config["num_hidden_layers"])
    try:
        weights = load_file(str(model_dir / "model.safetensors"))
    except OSError as exc:
        raise ModelError(f"Cannot read the weights in {model_dir}: {exc}.") from exc

    writer = gguf.GGUFWriter(str(out_path), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    writer.add_name(name)
    writer.add_block_count(n_layers)
    writer.add_context_length(int(config["max_position_embeddings"]))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_head_count(int(config["num_attention_heads"]))
    writer.add_layer_norm_eps(float(config["layer_norm_eps"]))
    writer.add_file_type(int(gguf.LlamaFileType.ALL_F32 if f32 else gguf.LlamaFileType.MOSTLY_F16))
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType(_pooling_type(model_dir)))

    tokens, types = _vocabulary(model_dir, int(config["vocab_size"]))
    writer.add_token_type_count(int(config.get("type_vocab_size", 1)))
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre(_PRE_TOKENIZER)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    tokenizer_config = _read_json(model_dir / "tokenizer_config.json")
    writer.add_bool("tokenizer.ggml.normalizer.lowercase", bool(tokenizer_config.get("do_lower_case", True)))
    # gguf logs "No handler for special token type cls" for BERT's [CLS]; llama.cpp reads it as BOS.
    gguf_logger = logging.getLogger("gguf.vocab")
    level = gguf_logger.level
    gguf_logger.setLevel(logging.ERROR)
    try:
        gguf.SpecialVocab(model_dir, load_merges=False, n_vocab=len(tokens)).add_to_gguf(writer, quiet=True)
    finally:
        gguf_logger.setLevel(level)

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_layers)
    for hf_name in sorted(weights):
        if hf_name in _SKIPPED:
            continue
        gguf_name = names.get_name(hf_name.removeprefix("bert."), try_suffixes=(".weight", ".bias"))
        if gguf_name is None:
            raise ModelError(f"Cannot map tensor {hf_name!r} of {model_dir} to a GGUF name.")
        data = weights[hf_name]
        keep_f32 = f32 or data.ndim <= 1 or gguf_name.endswith("_norm.weight") or gguf_name in _F32_TENSORS
        writer.add_tensor(gguf_name, data.astype(np.float32 if keep_f32 else np.float16))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
