#!/usr/bin/python3
"""Adds catalogue lines from stored copies of models' config.json files.

Each input line is one model: {"hf_id", "config": {...the repo's config.json...},
"preprocessor_config": {...} or null, "safetensors_total_size": N or null, "safetensors_dtype":
"F32" where the checkpoint stores another dtype than its config's, "source": where the copy
was read, "how_verified": why it is this repo's config, "tier": "A" | "B" | "C" | "I"} (I: the base model's config with the repo's
own quantization_config; how_verified then names "copy of the base config: ORG/NAME").

For each it appends to data/models.jsonl a line in the catalogue's schema (its summary fields
copied from the config, for listings) and to data/config_supplements.jsonl the whole config with
"whole_config": true, which catalog.cc reads as the Hub's file would be read. An id the catalogue
already has is left alone. Nothing is filled in or computed: a key the config does not write is null.

    scripts/catalog_add_config.py staged.jsonl [more.jsonl ...] [--dry-run] [--data DIR]

--data DIR writes DIR/models.jsonl and DIR/config_supplements.jsonl instead of the project's data/.
"""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

TEXT_KEYS = ["num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
             "head_dim", "vocab_size", "max_position_embeddings", "rope_theta", "rope_scaling", "sliding_window"]

FAMILIES = {
    "qwen2_vl": "Qwen2-VL", "qwen2_5_vl": "Qwen2.5-VL", "qwen3_vl": "Qwen3-VL", "qwen3_vl_moe": "Qwen3-VL",
    "internvl_chat": "InternVL", "internvl": "InternVL", "minicpmv": "MiniCPM-V", "minicpmo": "MiniCPM-o",
    "llava": "LLaVA", "llava_next": "LLaVA-NeXT", "llava_onevision": "LLaVA-OneVision", "gemma3n": "Gemma 3n",
    "gemma3_text": "Gemma 3", "gemma3": "Gemma 3", "paligemma": "PaliGemma", "phi3_v": "Phi-3.5-vision",
    "phi4mm": "Phi-4-multimodal", "idefics3": "Idefics3", "smolvlm": "SmolVLM", "glm4v": "GLM-4.1V",
    "deepseek_vl_v2": "DeepSeek-VL2", "paddleocr_vl": "PaddleOCR-VL", "kimi_vl": "Kimi-VL", "qwen3": "Qwen3",
    "pixtral": "Pixtral",
}
TIERS = {"A": "A: the official config.json page", "B": "B: a vendored copy naming the official repo",
         "C": "C: a re-upload whose _name_or_path names the repo",
         "I": "architecture inherited from the base model's config, with the repo's own quantization_config"}


def text_part(config):
    for key in ("text_config", "llm_config"):
        if isinstance(config.get(key), dict):
            return config[key]
    return config


def quant_summary(config):
    q = config.get("quantization_config")
    if not isinstance(q, dict):
        return None
    q = dict(q)
    for key in ("modules_to_not_convert", "ignore", "exclude_modules"):
        if isinstance(q.get(key), list) and len(q[key]) > 12:
            q[key] = f"{len(q[key])} modules (list omitted)"
    return q


def catalogue_line(rec):
    config = rec["config"]
    text = text_part(config)
    line = {"hf_id": rec["hf_id"], "family": FAMILIES.get(config.get("model_type"), config.get("model_type")),
            "architecture": (config.get("architectures") or [None])[0], "model_type": config.get("model_type"),
            "text_model_type": text.get("model_type") if text is not config else None}
    for key in TEXT_KEYS:
        line[key] = text.get(key)
    line["attention_layout"] = None
    line["tie_word_embeddings"] = config.get("tie_word_embeddings", text.get("tie_word_embeddings"))
    line["torch_dtype"] = config.get("torch_dtype", config.get("dtype", text.get("torch_dtype")))
    line.update({"moe": None, "mla": None, "hybrid": None, "quantization_config": quant_summary(config),
                 "vision": None, "total_params": None, "total_params_source": None,
                 "safetensors_total_size_bytes": rec.get("safetensors_total_size")})
    if rec.get("safetensors_dtype"):  # a checkpoint stored in another dtype than its config writes
        line["safetensors_dtype"] = rec["safetensors_dtype"]
    line["source_quality"] = TIERS[rec["tier"]] + " (the config is in config_supplements.jsonl)"
    line["source_description"] = f"config.json copy read at {rec['source']}; {rec['how_verified']}"
    line["source_urls"] = [f"https://huggingface.co/{rec['hf_id']}/blob/main/config.json"]
    line.update({"other_sources": None, "conflicts_between_sources": None, "cross_checks": None,
                 "notes": "added by scripts/catalog_add_config.py from a stored copy of the repo's config.json"})
    return line


def supplement_line(rec):
    out = {"hf_id": rec["hf_id"], "whole_config": True, "config": rec["config"]}
    if isinstance(rec.get("preprocessor_config"), dict):
        out["preprocessor_config"] = rec["preprocessor_config"]
    out["source"] = rec["source"]
    out["notes"] = "the repo's whole config.json (" + rec["how_verified"] + ")"
    return out


def read_staged(paths, known):
    """The staged records to add: each with a config naming its architectures, not yet known."""
    added = []
    for path in paths:
        for n, raw in enumerate(pathlib.Path(path).read_text().split("\n"), 1):
            if not raw.strip():
                continue
            rec = json.loads(raw)
            if not isinstance(rec.get("config"), dict) or not rec["config"].get("architectures"):
                print(f"{path}:{n}: {rec.get('hf_id')}: no config with architectures; skipped", file=sys.stderr)
                continue
            if rec["hf_id"].lower() in known:
                print(f"{path}:{n}: {rec['hf_id']} is in the catalogue already; skipped", file=sys.stderr)
                continue
            known.add(rec["hf_id"].lower())
            added.append(rec)
    return added


def main(argv):
    dry = "--dry-run" in argv
    argv = [a for a in argv if a != "--dry-run"]
    data = ROOT / "data"
    if "--data" in argv:
        i = argv.index("--data")
        if i + 1 >= len(argv):
            print("--data needs a folder", file=sys.stderr)
            return 2
        data = pathlib.Path(argv[i + 1])
        del argv[i:i + 2]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    models, supplements = data / "models.jsonl", data / "config_supplements.jsonl"
    known = {json.loads(l)["hf_id"].lower() for l in models.read_text().split("\n") if l.strip()}
    added = read_staged(argv, known)
    if not dry:
        with models.open("a") as f:
            for rec in added:
                f.write(json.dumps(catalogue_line(rec), ensure_ascii=False) + "\n")
        with supplements.open("a") as f:
            for rec in added:
                f.write(json.dumps(supplement_line(rec), ensure_ascii=False) + "\n")
    for rec in added:
        print(("would add " if dry else "added ") + rec["hf_id"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
