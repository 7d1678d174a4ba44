"""bench/compare --only model: the real SmolLM2-135M GGUF, attnlab against transformers (and
llama.cpp's Python binding where it is installed), measured as a user runs each.

* load: ``attnlab.model.load(path)`` (read + dequantize every tensor to f32, build the tokenizer)
  vs ``AutoModelForCausalLM.from_pretrained(dir, gguf_file=…, dtype=torch.float32)`` (the same
  dequantization to f32) vs ``llama_cpp.Llama(path)`` (which keeps the quantized blocks);
* prefill of n ∈ {16, 128, 512, 2048} tokens of the course spec, logits at the last position
  only: ``Model.predict(ids)`` vs ``model(ids, logits_to_keep=1)`` under ``torch.no_grad()`` with
  ``torch.set_num_threads(2)`` vs ``Llama.eval(ids)`` (2 threads);
* the command: ``attnlab model predict --ids …`` (process wall: load + prefill + top-10).

Agreement: attnlab's and transformers' top-1 ids equal and their last-position logits within
(L + 1)·8·eps32·(d + ffn + n) relative (f32 over 30 layers; the oracle tests' bound).
Ratios are reference time / attnlab time (> 1: attnlab is faster).
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

SIZES = [16, 128, 512, 2048]
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def model_path():
    d = os.environ.get("ATTNLAB_MODEL_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "attnlab", "models")
    p = os.path.join(d, MODEL_FILE)
    return p if os.path.isfile(p) else None


def spec_ids(bin_path, root, n_max):
    spec_dir = os.path.join(root, "spec")
    text = "\n".join(open(os.path.join(spec_dir, f), encoding="utf-8").read()
                     for f in sorted(os.listdir(spec_dir)))
    tmp = os.path.join(root, "target", "bench_model_text.txt")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    p = subprocess.run([bin_path, "model", "tokenize", "--model", "smollm2-135m", "--text-file", tmp,
                        "--values", "0", "--max-file-size", "1G", "--json"],
                       capture_output=True, text=True, check=True)
    ids = [t["id"] for t in json.loads(p.stdout)["tokens"]]
    while len(ids) < n_max:
        ids = ids + ids
    return ids[:n_max]


def run(bin_path, root, reps, failures):
    print("\n== real model: SmolLM2-135M-Instruct Q4_1 GGUF, f32 forward, 2 threads ==")
    path = model_path()
    if path is None:
        print("  skipped: the model is not in the cache (scripts/fetch-smollm2)")
        return None
    ids = spec_ids(bin_path, root, max(SIZES))
    out = {"prefill": {}}
    try:
        import attnlab
        have_py = hasattr(attnlab, "model")
    except ImportError:
        have_py = False
    if not have_py:
        print("  attnlab Python: skipped: `import attnlab` (with attnlab.model) fails"
              " (pip install ./crates/attnlab-py); load and prefill from the command's wall times")
    try:
        import torch
        import transformers
        torch.set_num_threads(2)
    except ImportError:
        torch = None
        print("  transformers: skipped: torch/transformers not importable")
    try:
        import llama_cpp
    except ImportError:
        llama_cpp = None
        print("  llama.cpp: skipped: llama_cpp (pip install llama-cpp-python) is not installed")

    # ---- load ----
    t_py_load = m = None
    if have_py:
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            m = attnlab.model.load(path, max_work=1e14)  # the 2048-token prefill is ~5e11 operations
            ts.append(time.perf_counter() - t)
        t_py_load = median(ts)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run([bin_path, "model", "info", "--model", path], capture_output=True, check=True)
        ts.append(time.perf_counter() - t)
    t_info = median(ts)
    t_cli1 = median([wall([bin_path, "model", "predict", "--model", path, "--ids", str(ids[0]), "--json"])[0]
                     for _ in range(reps)])
    hf = t_hf_load = None
    if torch is not None:
        t = time.perf_counter()
        hf = transformers.AutoModelForCausalLM.from_pretrained(
            os.path.dirname(path), gguf_file=os.path.basename(path), dtype=torch.float32).eval()
        t_hf_load = time.perf_counter() - t  # once: it takes seconds
    lc = t_lc_load = None
    if llama_cpp is not None:
        t = time.perf_counter()
        lc = llama_cpp.Llama(model_path=path, n_ctx=4096, n_threads=2, n_threads_batch=2,
                             n_batch=2048, n_ubatch=512, verbose=False)
        t_lc_load = time.perf_counter() - t
    print(f"  load: attnlab.model.load {fmt(t_py_load)}; `attnlab model info` (header only, process)"
          f" {t_info:.3f} s; `attnlab model predict` on 1 token (process: load + 1-token forward)"
          f" {t_cli1:.3f} s; transformers from_pretrained (dequantize to f32) {fmt(t_hf_load)};"
          f" llama.cpp Llama() {fmt(t_lc_load)}")
    if t_py_load and t_hf_load:
        print(f"  load ratio transformers / attnlab: {t_hf_load / t_py_load:.2f}"
              f" (goal: attnlab < 0.5 s: {'met' if t_py_load < 0.5 else 'NOT met'})")
    out["load"] = dict(attnlab=t_py_load, info=t_info, cli1=t_cli1, transformers=t_hf_load, llamacpp=t_lc_load)

    # ---- prefill ----
    print(f"  {'n':>5} {'attnlab s':>9} {'hf s':>8} {'hf/attnlab':>10} {'llama.cpp s':>11} {'lc/attnlab':>10}"
          f" {'command s':>9}  agreement")
    for n in SIZES:
        x = ids[:n]
        r = max(1, reps if n <= 512 else 3)
        t_cmd, o = wall([bin_path, "model", "predict", "--model", path, "--ids", ",".join(map(str, x)),
                         "--top", "10", "--max-work", "1e14", "--json"])
        cmd_top = [e["id"] for e in json.loads(o)["top"]]
        t_py = logits = None
        if have_py:
            m.predict(x, top=10)  # warm-up
            ts = []
            for _ in range(r):
                t = time.perf_counter()
                m.predict(x, top=10)
                ts.append(time.perf_counter() - t)
            t_py = median(ts)
            logits = m.logits(x)
        t_hf = agree = None
        if hf is not None:
            inp = torch.tensor([x])
            with torch.no_grad():
                want = hf(inp, logits_to_keep=1).logits[0, -1].numpy()  # warm-up and the oracle
                ts = []
                for _ in range(r):
                    t = time.perf_counter()
                    hf(inp, logits_to_keep=1)
                    ts.append(time.perf_counter() - t)
            t_hf = median(ts)
            tol = 31 * 8 * np.finfo(np.float32).eps * (576 + 1536 + n)
            top1 = int(np.argmax(want))
            ok = cmd_top[0] == top1
            detail = f"top-1 {cmd_top[0]} vs transformers {top1}"
            if logits is not None:
                err = float(np.max(np.abs(logits.astype(np.float64) - want)) / np.max(np.abs(want)))
                ok = ok and err < tol
                detail += f", logits rel err {err:.1e} ≤ {tol:.1e}"
            agree = ("yes" if ok else "NO") + f" ({detail})"
            if not ok:
                failures.append(f"model prefill n={n}")
        t_lc = None
        if lc is not None:
            ts = []
            for _ in range(r):
                lc.reset()
                t = time.perf_counter()
                lc.eval(x)
                ts.append(time.perf_counter() - t)
            t_lc = median(ts)
        base = t_py if t_py is not None else t_cmd - t_cli1
        print(f"  {n:>5} {base:9.3f} {fmt(t_hf, 8)} {ratio(t_hf, base):>10} {fmt(t_lc, 11)} {ratio(t_lc, base):>10}"
              f" {t_cmd:9.3f}  {agree or '-'}", flush=True)
        out["prefill"][n] = dict(attnlab=base, transformers=t_hf, llamacpp=t_lc, command=t_cmd)
    p512 = out["prefill"].get(512, {})
    if p512.get("transformers"):
        q = p512["attnlab"] / p512["transformers"]
        print(f"  prefill 512: attnlab / transformers = {q:.2f} (goal ≤ 0.8: {'met' if q <= 0.8 else 'NOT met'})")
    return out


def wall(cmd):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(cmd[:4])} … exited {p.returncode}: {p.stderr}")
    return dt, p.stdout


def fmt(t, w=0):
    s = "-" if t is None else f"{t:.3f} s" if w == 0 else f"{t:.3f}"
    return s.rjust(w) if w else s


def ratio(ref, ours):
    return "-" if ref is None or not ours else f"{ref / ours:.2f}"
