#!/usr/bin/env python3
"""Vectorised numpy reference for the rotary audit at L = 2^20, d = 128, base 10000.

Computes the same quantities as `attnlab rope audit` / `rope resolve`:
  * resolution: margin(s) = max_k |s*w_k mod 2pi| (wrapped to [0, pi]) for s in 1..L-1,
    min_margin and margin_at (first argmin);
  * decay: B(m) = sum_k cos(m*w_k) for m in 0..L-1, decay_first_negative = first m >= 1 with
    B(m) < 0, and min over m of B(m)/planes.
Positions are processed in chunks of 2^15 rows (a 2^15 x 64 float64 array per step), which is
numpy's fast path; phases use np.mod of the float64 product (accurate to ~1e-10 rad at these
sizes, plenty for the comparison). Prints one JSON object with the values and wall times.
"""
import json
import sys
import time

import numpy as np


def frequencies(d, base):
    return base ** (-(2.0 * np.arange(d // 2)) / d)


def resolve_scan(L, d, base, chunk=1 << 15):
    """min over s in 1..L-1 of margin(s) = max_k |s*w_k mod 2pi| (wrapped), and the first argmin."""
    w = frequencies(d, base)
    two_pi = 2.0 * np.pi
    best, best_at = np.inf, None
    for start in range(1, L, chunk):
        s = np.arange(start, min(start + chunk, L), dtype=np.float64)[:, None]
        ph = np.mod(s * w, two_pi)
        dist = np.minimum(ph, two_pi - ph)
        margin = dist.max(axis=1)
        i = int(margin.argmin())
        if margin[i] < best:
            best, best_at = float(margin[i]), start + i
    return best, best_at


def decay_scan(L, d, base, chunk=1 << 15):
    """B(m) = sum_k cos(m*w_k): first m >= 1 with B(m) < 0, and min over m of B(m)/planes."""
    w = frequencies(d, base)
    first_neg, min_b, min_at = None, np.inf, None
    for start in range(0, L, chunk):
        m = np.arange(start, min(start + chunk, L), dtype=np.float64)[:, None]
        B = np.cos(m * w).sum(axis=1)
        if first_neg is None:
            neg = np.nonzero(B[(1 if start == 0 else 0):] < 0)[0]
            if neg.size:
                first_neg = start + int(neg[0]) + (1 if start == 0 else 0)
        i = int(B.argmin())
        if B[i] < min_b:
            min_b, min_at = float(B[i]), start + i
    return first_neg, min_b / (d // 2), min_at


def main():
    L = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    base = float(sys.argv[3]) if len(sys.argv) > 3 else 10000.0
    t0 = time.perf_counter()
    best, best_at = resolve_scan(L, d, base)
    t_resolve = time.perf_counter() - t0
    t0 = time.perf_counter()
    first_neg, min_mean, min_at = decay_scan(L, d, base)
    t_decay = time.perf_counter() - t0
    print(json.dumps({
        "context": L, "dim": d, "base": base,
        "min_margin": best, "margin_at": best_at,
        "decay_first_negative": first_neg, "decay_min_mean": min_mean, "decay_min_mean_at": min_at,
        "seconds_resolve": t_resolve, "seconds_decay": t_decay, "seconds_total": t_resolve + t_decay,
        "numpy": np.__version__,
    }))


if __name__ == "__main__":
    main()
