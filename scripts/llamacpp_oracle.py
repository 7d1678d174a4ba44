#!/usr/bin/env python3
"""llama.cpp's own output on SmolLM2 with rope metadata it must honour (issue 20's oracle).

    python scripts/llamacpp_oracle.py MODEL.gguf OUT_DIR ID [ID ...]

Writes three GGUF files into OUT_DIR from MODEL.gguf with the `gguf` package — every tensor
dequantized to F32 by `gguf.quants.dequantize` (so llama.cpp multiplies in f32 instead of
quantizing its activations to 8 bits, and the comparison is f32 against f32), every metadata key
copied — one per rope variant:

* `plain`: the file's own rope (base 100000, no scaling keys);
* `linear`: `llama.rope.scaling.type = linear`, `factor = 4` (llama.cpp: freq_scale = 1/4);
* `yarn`: `llama.rope.scaling.type = yarn`, `factor = 4`, `original_context_length = 2048`
  (llama.cpp: ext_factor 1, its YaRN ramp over the floored/ceiled correction range, mscale
  1 + 0.1·ln 4 on cos and sin).

Then runs llama.cpp (`llama-cpp-python`: f32 K/V cache, no flash attention, 2 threads) on the
ids and prints one JSON object: llama.cpp's version and, per variant, the file's path and the
logits at the last position (all of the vocabulary).
"""
import json
import os
import sys

import numpy as np

import gguf

VARIANTS = {
    "plain": {},
    "linear": {"scaling.type": "linear", "scaling.factor": 4.0},
    "yarn": {"scaling.type": "yarn", "scaling.factor": 4.0, "scaling.original_context_length": 2048},
}


def copy_with_rope(reader, src_arch, out_path, rope):
    w = gguf.GGUFWriter(out_path, src_arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, field.contents(), vtype, sub_type=sub)
    for key, value in rope.items():
        full = f"{src_arch}.rope.{key}"
        if isinstance(value, str):
            w.add_string(full, value)
        elif isinstance(value, int):
            w.add_uint32(full, value)
        else:
            w.add_float32(full, value)
    for t in reader.tensors:
        data = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        w.add_tensor(t.name, np.ascontiguousarray(data))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    model, out_dir, ids = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
    import llama_cpp

    reader = gguf.GGUFReader(model)
    arch = reader.fields["general.architecture"].contents()
    result = {"llama_cpp_python": llama_cpp.__version__, "ids": ids, "variants": {}}
    for name, rope in VARIANTS.items():
        path = os.path.join(out_dir, f"smollm2-f32-{name}.gguf")
        copy_with_rope(reader, arch, path, rope)
        llm = llama_cpp.Llama(
            model_path=path,
            n_ctx=max(64, len(ids)),
            n_batch=max(64, len(ids)),
            n_threads=2,
            logits_all=True,
            flash_attn=False,
            type_k=0,  # GGML_TYPE_F32: no f16 rounding of the keys
            type_v=0,
            verbose=False,
        )
        llm.eval(ids)
        logits = np.asarray(llm.scores[len(ids) - 1], dtype=np.float64)
        result["variants"][name] = {"path": path, "rope": rope, "logits": logits.tolist()}
        del llm
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
