#!/usr/bin/env python3
"""The `gguf` package's reading of a GGUF file, for attnlab's cross-checks (a test oracle).

    gguf_oracle.py meta FILE            metadata and tensor table as JSON on stdout
    gguf_oracle.py tensors FILE         every tensor dequantized by gguf.quants.dequantize, streamed
                                        on stdout as: u32 name length, name, u32 type, u64 count,
                                        count little-endian f32 (type 0xFFFFFFFF: gguf cannot
                                        dequantize it; no values follow)
    gguf_oracle.py tokenize DIR FILE    reads strings (a JSON list) on stdin, prints transformers'
                                        AutoTokenizer.from_pretrained(DIR, gguf_file=FILE) ids for
                                        each (add_special_tokens=False) as a JSON list

Written by attnlab's tests' authors, but every number it prints is computed by the gguf package
(GGUFReader, gguf.quants.dequantize) or transformers, not here.
"""
import json
import struct
import sys


def meta(path):
    import gguf

    r = gguf.GGUFReader(path)
    fields = {}
    for name, f in r.fields.items():
        if name.startswith("GGUF."):
            continue  # the reader's own pseudo-fields (version, counts)
        types = [t.name for t in f.types]
        v = f.contents()
        if hasattr(v, "item"):
            v = v.item()
        fields[name] = {"types": types, "value": v}
    tensors = [
        {
            "name": t.name,
            "dims": [int(d) for d in t.shape],
            "type": int(t.tensor_type),
            "elements": int(t.n_elements),
            "bytes": int(t.n_bytes),
            "data_offset": int(t.data_offset),
        }
        for t in r.tensors
    ]
    json.dump({"fields": fields, "tensors": tensors}, sys.stdout)


def tensors(path):
    import gguf
    import numpy as np

    r = gguf.GGUFReader(path)
    out = sys.stdout.buffer
    for t in r.tensors:
        name = t.name.encode()
        try:
            x = gguf.quants.dequantize(t.data, t.tensor_type)
        except NotImplementedError:
            out.write(struct.pack("<I", len(name)) + name + struct.pack("<IQ", 0xFFFFFFFF, 0))
            continue
        x = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
        out.write(struct.pack("<I", len(name)) + name + struct.pack("<IQ", int(t.tensor_type), x.size))
        out.write(x.astype("<f4").tobytes())
    out.flush()


def tokenize(directory, file):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(directory, gguf_file=file)
    texts = json.load(sys.stdin)
    ids = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    json.dump({"ids": ids, "with_special": [tok(t)["input_ids"] for t in texts[:1]]}, sys.stdout)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "meta":
        meta(sys.argv[2])
    elif cmd == "tensors":
        tensors(sys.argv[2])
    elif cmd == "tokenize":
        tokenize(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown command {cmd}")
