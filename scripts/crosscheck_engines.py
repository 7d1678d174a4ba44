# A manual cross-check of attnlab's engine modules (crates/attnlab-core/src/engines/) against the
# engines' own Python code: the rotary files of the vLLM 0.33.0 and SGLang 0.5.23 wheels, run on
# CPU torch with their GPU-side imports stubbed (the packages themselves do not install next to the
# pinned torch 2.15.0: vLLM's wheel is a 336 MB CUDA build pinning its own torch).
#   pip download --no-deps -d W vllm==0.33.0 sglang==0.5.23
#   unzip W/vllm-*.whl 'vllm/model_executor/layers/rotary_embedding/*' -d SRC
#   unzip W/sglang-*.whl 'sglang/srt/layers/rotary_embedding/*' -d SRC
#   ATTNLAB_ENGINE_SRC=SRC python scripts/crosscheck_engines.py
# Expected (pinned in crates/attnlab-core/tests/rope_engines.rs, float32 here):
#   vllm_gptoss_inv12 0.0067949593 (truncate=False), 0.0070157140 (truncate=True, llama.cpp's rule)
#   vllm_phi3_use_long_rope True, vllm_phi3_mscale 1.19023807
#   sglang_yarn_mscale(attn_factor 0.8, factor 4) 0.91090355, sglang_gptoss_inv12 0.0067949593
# Run vLLM 0.33.0's and SGLang 0.5.23's own rotary functions (files from the wheels) with stubbed imports.
import sys, types, importlib.util, math, json, torch
def stub(name, **attrs):
    m = types.ModuleType(name); m.__path__ = []; m.__dict__.update(attrs); sys.modules[name] = m; return m
class RE(torch.nn.Module):
    def __init__(self, head_size, rotary_dim, max_position_embeddings, base, is_neox_style, dtype, **kw):
        super().__init__(); self.head_size=head_size; self.rotary_dim=rotary_dim; self.max_position_embeddings=max_position_embeddings; self.base=base
def load(path, name, pkg):
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=None)
    m = importlib.util.module_from_spec(spec); m.__package__ = pkg; sys.modules[name]=m; spec.loader.exec_module(m); return m
for n in ["vllm","vllm.model_executor","vllm.model_executor.layers","vllm.model_executor.layers.rotary_embedding"]: stub(n)
stub("vllm.model_executor.layers.rotary_embedding.base", RotaryEmbedding=RE)
stub("vllm.logger", init_logger=lambda n: types.SimpleNamespace(warning_once=print, warning=print))
cfg = types.SimpleNamespace(model_config=types.SimpleNamespace(max_model_len=131072))
stub("vllm.config", get_current_vllm_config=lambda: cfg)
stub("vllm.platforms", current_platform=types.SimpleNamespace(is_cuda=lambda: False, is_rocm=lambda: False))
class CO:
    @staticmethod
    def register(name):
        return lambda c: c
stub("vllm.model_executor.custom_op", CustomOp=CO)
stub("vllm.utils"); stub("vllm.utils.torch_utils", direct_register_custom_op=lambda *a, **k: None)
import os
SRC=os.environ.get("ATTNLAB_ENGINE_SRC", "/tmp/i20pip/src")
P=SRC+"/vllm/model_executor/layers/rotary_embedding/"
try:
    load(P+"common.py","vllm.model_executor.layers.rotary_embedding.common","vllm.model_executor.layers.rotary_embedding")
except Exception as e:
    print("common import failed:", e)
yarn = load(P+"yarn_scaling_rope.py","vllm.model_executor.layers.rotary_embedding.yarn_scaling_rope","vllm.model_executor.layers.rotary_embedding")
out = {}
# gpt-oss: head 64, base 150000, orig 4096, factor 32, truncate False
y = yarn.YaRNScalingRotaryEmbedding.__new__(yarn.YaRNScalingRotaryEmbedding)
torch.nn.Module.__init__(y); y.rotary_dim=64; y.base=150000.0; y.max_position_embeddings=4096; y.beta_fast=32; y.beta_slow=1; y.truncate=False
out["vllm_gptoss_inv12"] = float(y._compute_inv_freq(32.0)[12])
y.truncate=True; out["vllm_gptoss_truncated_inv12"] = float(y._compute_inv_freq(32.0)[12])
print(json.dumps(out))
# vLLM phi3: long factors chosen by max_model_len
ph = load(P+"phi3_long_rope_scaled_rope.py","vllm.model_executor.layers.rotary_embedding.phi3_long_rope_scaled_rope","vllm.model_executor.layers.rotary_embedding")
short=[1.0]*48; long=[1.0800000429153442]+[2.0]*47
e = ph.Phi3LongRoPEScaledRotaryEmbedding(96, 96, 131072, 4096, 10000.0, True, torch.float32, short, long)
out["vllm_phi3_use_long_rope(max_model_len 131072, orig 4096)"] = e.use_long_rope
out["vllm_phi3_mscale"] = e.long_mscale
# SGLang yarn + dynamic
for n in ["sglang","sglang.srt","sglang.srt.layers","sglang.srt.layers.rotary_embedding"]: stub(n)
stub("sglang.srt.layers.rotary_embedding.base", RotaryEmbedding=RE)
stub("sglang.srt.environ", envs=types.SimpleNamespace(SGLANG_ROPE_CACHE_ALIGN=types.SimpleNamespace(get=lambda: 1)))
S=SRC+"/sglang/srt/layers/rotary_embedding/"
sy = load(S+"yarn.py","sglang.srt.layers.rotary_embedding.yarn","sglang.srt.layers.rotary_embedding")
o = sy.YaRNScalingRotaryEmbedding(128, 128, 8192, 1e6, True, 4.0, torch.float32, attn_factor=0.8)
out["sglang_yarn_mscale(attn_factor 0.8, factor 4)"] = o.mscale
o = sy.YaRNScalingRotaryEmbedding(64, 64, 4096, 150000.0, True, 32.0, torch.float32, truncate=False)
out["sglang_gptoss_inv12"] = float(o._compute_inv_freq(32.0)[12])
print(json.dumps(out, indent=1))
