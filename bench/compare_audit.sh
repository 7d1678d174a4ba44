#!/usr/bin/env bash
# Runs the numpy reference and attnlab on the same machine, in one go, at L = 2^20, d = 128,
# base 10000, and prints the wall times, the ratio and whether the values agree.
# Usage: bench/compare_audit.sh [L] [D] [BASE]      (run from the repository root)
set -euo pipefail
L=${1:-1048576}; D=${2:-128}; BASE=${3:-10000}
cd "$(dirname "$0")/.."
cargo build --release --quiet
BIN=target/release/attnlab
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

# Best of 3 wall-clock runs (seconds) of a command whose stdout goes to $TMP/out.json.
best_of_3() {
  local best=""
  for _ in 1 2 3; do
    local t0 t1; t0=$(date +%s.%N); "$@" > "$TMP/out.json"; t1=$(date +%s.%N)
    local t; t=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || (( $(echo "$t < $best" | bc -l) )); then best=$t; fi
  done
  echo "$best"
}

T_NP=$(best_of_3 python3 bench/audit_numpy.py "$L" "$D" "$BASE"); cp "$TMP/out.json" "$TMP/np.json"
T_RES=$(best_of_3 "$BIN" rope resolve --base "$BASE" --dim "$D" --context "$L" --json); cp "$TMP/out.json" "$TMP/res.json"
T_AUD=$(best_of_3 "$BIN" rope audit --base "$BASE" --dim "$D" --context "$L" --skip-min-base --json); cp "$TMP/out.json" "$TMP/aud.json"
T_FULL=$(best_of_3 "$BIN" rope audit --base "$BASE" --dim "$D" --context "$L" --json); cp "$TMP/out.json" "$TMP/full.json"

python3 - "$TMP" "$T_NP" "$T_RES" "$T_AUD" "$T_FULL" <<'PY'
import json, sys
d, t_np, t_res, t_aud, t_full = sys.argv[1], *map(float, sys.argv[2:])
np_ = json.load(open(f"{d}/np.json")); res = json.load(open(f"{d}/res.json"))
aud = json.load(open(f"{d}/aud.json")); full = json.load(open(f"{d}/full.json"))
print(f"L = {np_['context']}, d = {np_['dim']}, base = {np_['base']} (numpy {np_['numpy']})")
print(f"numpy  resolve {np_['seconds_resolve']:.3f} s + decay {np_['seconds_decay']:.3f} s (in-process); process wall {t_np:.3f} s")
print(f"attnlab rope resolve              wall {t_res:.3f} s")
print(f"attnlab rope audit --skip-min-base wall {t_aud:.3f} s (resolve + decay + precision of 4 dtypes + invariance)")
print(f"attnlab rope audit (with min base) wall {t_full:.3f} s (min base {full['min_base_for_context']:.4g})")
print(f"ratio numpy(resolve+decay) / attnlab audit --skip-min-base: {t_np / t_aud:.1f}x")
print(f"ratio numpy(resolve only, in-process) / attnlab resolve (process wall): {np_['seconds_resolve'] / t_res:.1f}x")
ok = (np_['margin_at'] == res['margin_at'] == aud['margin_at']
      and abs(np_['min_margin'] - res['min_margin']) < 1e-9
      and np_['decay_first_negative'] == aud['decay_first_negative']
      and abs(np_['decay_min_mean'] - aud['decay_min_mean']) < 1e-9)
print("values agree:", ok, f"(min_margin {res['min_margin']:.6g} at {res['margin_at']}, first negative B at {aud['decay_first_negative']})")
sys.exit(0 if ok else 1)
PY
