"""Oracle for attnlab's Llama-family forward (crates/attnlab-core/tests/llama_oracle.rs).

`tiny DIR ARCH...`: builds a small random checkpoint of each ARCH (llama, mistral, qwen2, qwen3)
with transformers, saves it to DIR/ARCH (config.json + model.safetensors) and writes
DIR/ARCH/oracle.json: the token ids, the hidden states after layer 0 and the last-position logits,
from transformers in float32 and in float64 (with the rotary cos/sin and RMSNorm, which
transformers computes in float32 whatever the model's dtype, evaluated in float64 too).

`gguf FILE OUT.json PROMPT...`: loads the GGUF with transformers (dequantized to float32) and
writes, per prompt, transformers' token ids, its last-position logits and top-10 ids, the
hidden states after layer 0, and the attention weights of layer 2, head 4 (eager attention,
`output_attentions=True`: the weights every path of transformers computes).
"""
import json
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM


def run(model, ids):
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True)
    return {
        "hidden_after_layer0": out.hidden_states[1][0].flatten().tolist(),
        "logits_last": out.logits[0, -1].tolist(),
        "top10": torch.topk(out.logits[0, -1], 10).indices.tolist(),
    }


def rotary_in_f64(model):
    """transformers computes cos/sin in float32 even for a float64 model (autocast off, `.float()`);
    for the float64 reference the angles and their cos/sin are computed in float64 instead."""
    rot = model.model.rotary_emb

    def forward(x, position_ids):
        inv = rot.inv_freq[None, :, None].double().expand(position_ids.shape[0], -1, 1)
        freqs = (inv @ position_ids[:, None, :].double()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return (emb.cos() * rot.attention_scaling).to(x.dtype), (
            emb.sin() * rot.attention_scaling
        ).to(x.dtype)

    rot.forward = forward
    # RMSNorm likewise upcasts to float32 (`hidden_states.to(torch.float32)`) whatever the dtype.
    for mod in model.modules():
        if type(mod).__name__.endswith("RMSNorm"):
            def norm(x, mod=mod):
                var = x.pow(2).mean(-1, keepdim=True)
                return mod.weight * (x * torch.rsqrt(var + mod.variance_epsilon))

            mod.forward = norm
    return model


def tiny(arch, out_dir):
    torch.manual_seed(0)
    common = dict(
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=101,
        max_position_embeddings=256,
        rms_norm_eps=1e-5,
    )
    if arch == "llama":
        cfg = transformers.LlamaConfig(**common, rope_theta=10000.0, tie_word_embeddings=False)
        cls = transformers.LlamaForCausalLM
    elif arch == "mistral":
        cfg = transformers.MistralConfig(**common, rope_theta=50000.0, sliding_window=128,
                                         tie_word_embeddings=False)
        cls = transformers.MistralForCausalLM
    elif arch == "qwen2":
        cfg = transformers.Qwen2Config(**common, rope_theta=1000000.0, tie_word_embeddings=True)
        cls = transformers.Qwen2ForCausalLM
    elif arch == "qwen3":
        cfg = transformers.Qwen3Config(**common, head_dim=24, rope_theta=1000000.0,
                                       tie_word_embeddings=True)
        cls = transformers.Qwen3ForCausalLM
    else:
        raise SystemExit(f"unknown arch {arch}")
    cfg._attn_implementation = "sdpa"  # eager's softmax runs in float32 even for float64
    model = cls(cfg).eval()
    # Every parameter drawn (biases and norms too, so they are exercised): norms near 1,
    # matrices with entries of the size that keeps activations O(1).
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            elif p.dim() == 1:
                p.copy_(0.3 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5)
    model.save_pretrained(out_dir)
    ids = torch.randint(0, cfg.vocab_size, (19,)).tolist()
    doc = {"ids": ids, "f32": run(model.float(), ids), "f64": run(rotary_in_f64(model.double()), ids),
           "versions": {"torch": torch.__version__, "transformers": transformers.__version__}}
    with open(f"{out_dir}/oracle.json", "w") as f:
        json.dump(doc, f)


def from_gguf(path, out, prompts):
    import os

    from transformers import AutoTokenizer

    d, name = os.path.split(path)
    torch.set_num_threads(2)
    tok = AutoTokenizer.from_pretrained(d, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=name, dtype=torch.float32).eval()
    cases = []
    for p in prompts:
        ids = tok(p, add_special_tokens=False)["input_ids"]
        r = run(model, ids)
        r["text"] = p
        r["ids"] = ids
        cases.append(r)
    # Attention weights are returned only by the eager implementation (the same model, the
    # same weights; sdpa above for the logits, as served).
    model.set_attn_implementation("eager")
    for c in cases:
        with torch.no_grad():
            att = model(torch.tensor([c["ids"]]), output_attentions=True).attentions
        c["attn_layer"], c["attn_head"] = 2, 4
        c["attn"] = att[2][0, 4].tolist()
    with open(out, "w") as f:
        json.dump({"cases": cases, "dim": model.config.hidden_size}, f)


if __name__ == "__main__":
    if sys.argv[1] == "tiny":
        # tiny DIR ARCH...: one checkpoint per architecture in DIR/ARCH (one Python start-up).
        import os

        for arch in sys.argv[3:]:
            os.makedirs(f"{sys.argv[2]}/{arch}", exist_ok=True)
            tiny(arch, f"{sys.argv[2]}/{arch}")
    elif sys.argv[1] == "gguf":
        from_gguf(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        raise SystemExit("usage: llama_oracle.py tiny DIR ARCH... | gguf FILE OUT.json PROMPT...")
