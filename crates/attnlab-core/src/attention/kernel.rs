//! The fused, blocked attention forward for `f32` and `f64`.
//!
//! One building block does every product: a register-blocked micro-kernel
//! `C[i, j] (=|+=) Σ_p A[i, p]·B[p, j]` for [`MR`] = 6 rows of `A`, packed as a micro-panel
//! `[p][i]` by [`pack_a_into`], and `NR` contiguous columns of a row-major `B` (16 `f32` / 8 `f64`:
//! two 256-bit registers). Every `C[i, j]` is the fused multiply-add chain
//! `acc ← fma(A[i, p], B[p, j], acc)` for `p = 0, 1, …` in order, whatever its position in the
//! block, and the AVX-512F and AVX2 + FMA versions return the same bits as the portable one (all
//! use correctly rounded fused multiply-adds; tested). With AVX-512F a call takes two
//! micro-panels (12 rows, one 512-bit register of `NR` columns each).
//!
//! A tile of [`BQ`] queries is computed *transposed*, queries along the SIMD lanes:
//! `Sᵀ = K_b·Q_tᵀ` for a block `b` of [`key_block`] keys (rows = keys, columns = queries), masked entries
//! −∞, then per query `i` (one lane): `m' = max(m, max_{j∈b} s_ji)`, `p_ji = exp((s_ji − m')/√d_k)`,
//! `α = exp((m − m')/√d_k)`, `l ← α·l + Σ_{j∈b} p_ji` (summed in key order),
//! `Oᵀ ← α·Oᵀ + V_bᵀ·P` and finally `O = (Oᵀ/l)ᵀ` ([`forward_tile`], the online softmax: the
//! n × n matrix never exists, the buffers are `BK × BQ` and `d_v × BQ`). [`weights_tile`] is the
//! path that returns `A`: one block of all keys, `A = P/l` written out, `O = A·V`.
//! Every operation on query `i` depends only on `i`'s own lane and the keys in order, so a row's
//! result does not depend on the tile it landed in.
//!
//! Tiles are fixed by n alone (`[k·BQ, (k+1)·BQ)`), each is computed by one thread and results
//! are gathered in tile order, so the output is bit-identical for any number of rayon threads.

use rayon::prelude::*;

use super::exp;
pub(crate) use crate::float::{Float, Scratch, Workspace};
use crate::Real;

/// Rows per micro-kernel call.
pub(crate) const MR: usize = 6;
/// Queries per tile (a multiple of every `NR`); tile boundaries are multiples of `BQ`.
pub(crate) const BQ: usize = 48;
/// A sequence of at most this many keys is one block of the online softmax: 258 = 43·6, so the
/// common 256 is one block (no rescaling pass, no 16-key tail block: ~5 % of a (256, 64)
/// forward).
pub(crate) const BK_WHOLE: usize = 258;
/// Bytes of L1 data cache the micro-kernel's `B` operand may fill (with the `A` micro-panel, a
/// few KB, beside it in a 32 KB L1): a longer sequence's key blocks are sized so that the block
/// of probabilities `P` (`BK × BQ`, the `B` of `V_bᵀ·P`) fits, and a product whose `B` does
/// not fit runs panel by panel (see [`gemm`]). Measured on Zen 3 (one thread, (4096, 128)):
/// `V_bᵀ·P` 83–86 GFLOP/s with 132-key blocks in f32 against 71–76 with 258; in f64 `Q·Kᵀ`
/// 40–42 panel by panel against 31–33 with the 48 KB `Q_tᵀ` swept whole.
const L1_B_BYTES: usize = 26 * 1024;

/// Keys per block of the online softmax for a sequence of `n` keys: all of them up to
/// [`BK_WHOLE`], else the largest multiple of [`MR`] whose `BK × BQ` block fits
/// [`L1_B_BYTES`] (132 in f32, 66 in f64). Fixed by `n` and the type alone, so a row's result
/// does not depend on its tile.
pub(crate) fn key_block<F>(n: usize) -> usize {
    if n <= BK_WHOLE {
        return BK_WHOLE;
    }
    let fit = L1_B_BYTES / (BQ * std::mem::size_of::<F>());
    (fit / MR * MR).max(MR)
}

/// Queries per tile for `nq` queries shared by `threads`: [`BQ`], or 32 or 16 where that
/// splits the queries more evenly. The tasks are tiles of whole panels (a short last tile costs
/// its queries rounded up to a panel); with `threads` taking contiguous runs of tiles, the
/// busiest takes the first `⌈tiles/threads⌉`. A narrower tile is chosen only if it gives the
/// busiest thread at least 3 % fewer queries than `BQ` (narrower tiles stream the keys and
/// values once more per query): at n = 256 on two threads, 4 tiles of 32 on each thread
/// instead of 3 of 48 on one and 2 of 48 and one of 16 on the other. Any choice gives the same
/// bits (a row's result does not depend on its tile).
pub(crate) fn tile_rows(nq: usize, threads: usize) -> usize {
    let busiest = |w: usize| {
        let tiles = nq.div_ceil(w);
        let first = tiles.div_ceil(threads.max(1));
        if first == tiles {
            // The busiest runs the short last tile too (rounded up to 16 lanes).
            (tiles - 1) * w + (nq - (tiles - 1) * w).next_multiple_of(16)
        } else {
            first * w
        }
    };
    let whole = busiest(BQ);
    [32, 16]
        .into_iter()
        .filter(|&w| busiest(w) * 100 <= whole * 97)
        .min_by_key(|&w| (busiest(w), std::cmp::Reverse(w)))
        .unwrap_or(BQ)
}

/// Queries per tile for one forward: [`tile_rows`] on the pool's threads for one head run in
/// parallel, else [`BQ`] (on one thread every width costs the same; several heads give the
/// threads whole heads to share).
pub(crate) fn tile_width(nq: usize, heads: usize, parallel: bool) -> usize {
    if parallel && heads == 1 {
        tile_rows(nq, rayon::current_num_threads())
    } else {
        BQ
    }
}

thread_local! {
    static SCRATCH_F32: std::cell::RefCell<Scratch<f32>> = std::cell::RefCell::new(Scratch::default());
    static SCRATCH_F64: std::cell::RefCell<Scratch<f64>> = std::cell::RefCell::new(Scratch::default());
    static WORKSPACE_F32: std::cell::RefCell<Workspace<f32>> = std::cell::RefCell::new(Workspace::new());
    static WORKSPACE_F64: std::cell::RefCell<Workspace<f64>> = std::cell::RefCell::new(Workspace::new());
}

/// `v` with at least `len` elements (grown with zeros, never shrunk), as a slice of `len`.
fn sized<F: Real>(v: &mut Vec<F>, len: usize) -> &mut [F] {
    if v.len() < len {
        v.resize(len, F::zero());
    }
    &mut v[..len]
}

/// Test switch: run the portable kernels even where AVX2 + FMA exist (they return the same bits,
/// so other tests running meanwhile are unaffected except in speed).
#[cfg(test)]
pub(crate) static FORCE_PORTABLE: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// AVX-512F (and the AVX2 + FMA it implies on every CPU that has it), unless the test switch
/// forces the portable kernels.
fn has_avx512() -> bool {
    #[cfg(test)]
    if FORCE_PORTABLE.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx512f") && has_avx2_fma()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn has_avx2_fma() -> bool {
    #[cfg(test)]
    if FORCE_PORTABLE.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Portable micro-kernel: the definition the SIMD kernels reproduce bit for bit, micro-panel by
/// micro-panel and panel by panel.
///
/// # Safety
/// As [`Float::micro_kernel`]'s kernels.
#[allow(clippy::too_many_arguments)]
unsafe fn mk_portable<F: Real, const NR: usize>(
    m: usize,
    a: *const F,
    sa: usize,
    b: *const F,
    ldb: usize,
    t: usize,
    c: *mut F,
    ldc: usize,
    ncols: usize,
    add: bool,
) {
    for (g, rows) in [(0, m.min(MR)), (1, m.saturating_sub(MR))] {
        for q in (0..ncols).step_by(NR) {
            let nc = NR.min(ncols - q);
            // SAFETY: the caller's contract covers micro-panel g of a (read only when it has
            // rows), rows g·MR.. of c and these columns of b and c.
            unsafe {
                let (a, c) = (a.add(g * sa), c.add(g * MR * ldc + q));
                if rows > 0 {
                    panel_portable::<F, NR>(rows, a, b.add(q), ldb, t, c, ldc, nc, add);
                }
            }
        }
    }
}

/// One panel of [`mk_portable`] (`m ≤ MR`, `ncols ≤ NR`).
///
/// # Safety
/// As [`mk_portable`] for one micro-panel and `ncols ≤ NR`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn panel_portable<F: Real, const NR: usize>(
    m: usize,
    a: *const F,
    b: *const F,
    ldb: usize,
    t: usize,
    c: *mut F,
    ldc: usize,
    ncols: usize,
    add: bool,
) {
    let mut acc = [[F::zero(); NR]; MR];
    for p in 0..t {
        for (i, row) in acc.iter_mut().enumerate() {
            // SAFETY: p < t, i < MR, within the caller's bounds.
            let av = unsafe { *a.add(p * MR + i) };
            for (j, x) in row.iter_mut().enumerate() {
                // SAFETY: p < t, j < NR.
                *x = F::fma(av, unsafe { *b.add(p * ldb + j) }, *x);
            }
        }
    }
    for (i, row) in acc.iter().enumerate().take(m) {
        for (j, &x) in row.iter().enumerate().take(ncols) {
            // SAFETY: i < m, j < ncols.
            let cij = unsafe { &mut *c.add(i * ldc + j) };
            *cij = if add { *cij + x } else { x };
        }
    }
}

/// `Float::exp_cols` for one float type and instruction set (`$feature`, `$lanes` values per
/// register; the `lanes` argument a multiple of it): per block of lanes,
/// `s[j, k] ← exp((s[j, k] − m[k])·c)` and `sum[k] += s[j, k]` for `j` in order — the portable
/// version's operations, one lane per query.
#[cfg(target_arch = "x86_64")]
macro_rules! exp_cols_kernel {
    ($feature:literal, $name:literal, $exp_cols:ident, $col_max:ident, $scale_cols:ident,
     $t:ty, $lanes:expr, $exp:path, $load:ident, $set1:ident, $add:ident, $store:ident,
     $sub:ident, $mul:ident, $max:ident) => {
        /// See `Float::scale_cols` (one product per value, as the portable version).
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $name, "; `s` holds `rows × BQ` values, `a` `BQ`.")]
        #[target_feature(enable = $feature)]
        pub unsafe fn $scale_cols(s: &mut [$t], rows: usize, lanes: usize, a: &[$t]) {
            const BQ: usize = super::BQ;
            assert!(s.len() >= rows * BQ && a.len() >= BQ && lanes <= BQ);
            for k in (0..lanes).step_by($lanes) {
                let va = $load(a.as_ptr().add(k));
                for j in 0..rows {
                    let ptr = s.as_mut_ptr().add(j * BQ + k);
                    $store(ptr, $mul($load(ptr), va));
                }
            }
        }

        /// See `Float::col_max`: per block of lanes, `m ← max(s[j], m)` for `j` in order, where
        /// the instruction's `max(a, b)` is `a > b ? a : b` — the portable comparison exactly
        /// (NaN and signed zeros included).
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $name, "; `s` holds `rows × BQ` values, `m` `BQ`.")]
        #[target_feature(enable = $feature)]
        pub unsafe fn $col_max(s: &[$t], rows: usize, lanes: usize, m: &mut [$t]) {
            const BQ: usize = super::BQ;
            assert!(s.len() >= rows * BQ && m.len() >= BQ && lanes <= BQ);
            for k in (0..lanes).step_by($lanes) {
                let mut acc = $load(m.as_ptr().add(k));
                for j in 0..rows {
                    acc = $max($load(s.as_ptr().add(j * BQ + k)), acc);
                }
                $store(m.as_mut_ptr().add(k), acc);
            }
        }

        /// See `Float::exp_cols` (same operations as the portable version).
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $name, "; `s` holds `rows × BQ` values, `m` and `sum` `BQ`.")]
        #[target_feature(enable = $feature)]
        pub unsafe fn $exp_cols(
            s: &mut [$t],
            rows: usize,
            lanes: usize,
            m: &[$t],
            c: $t,
            sum: &mut [$t],
        ) {
            const BQ: usize = super::BQ;
            assert!(s.len() >= rows * BQ && m.len() >= BQ && sum.len() >= BQ && lanes <= BQ);
            let vc = $set1(c);
            for k in (0..lanes).step_by($lanes) {
                let vm = $load(m.as_ptr().add(k));
                let mut acc = $load(sum.as_ptr().add(k));
                for j in 0..rows {
                    let ptr = s.as_mut_ptr().add(j * BQ + k);
                    let e = $exp($mul($sub($load(ptr), vm), vc));
                    $store(ptr, e);
                    acc = $add(acc, e);
                }
                $store(sum.as_mut_ptr().add(k), acc);
            }
        }
    };
}

/// The AVX2 + FMA kernels of one float type, written once: `$t` in 256-bit vectors `$v` of
/// `$lanes` values, with that type's intrinsics (`_ps` for f32, `_pd` for f64).
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_kernels {
    ($mk:ident, $panel:ident, $exp_cols:ident, $col_max:ident, $scale_cols:ident, $t:ty, $v:ty,
     $lanes:expr, $exp:path, $zero:ident, $load:ident, $bcast:ident, $fmadd:ident, $add:ident, $store:ident,
     $set1:ident, $sub:ident, $mul:ident, $max:ident) => {
        /// AVX2 + FMA micro-kernel: each micro-panel of `m` rows (one, or two `sa` apart when
        /// `m > MR`) over every `2·lanes`-column panel `ncols` needs, in order.
        ///
        /// # Safety
        /// As `Float::micro_kernel`'s kernels, and the CPU supports AVX2 and FMA.
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx2,fma")]
        pub unsafe fn $mk(
            m: usize,
            a: *const $t,
            sa: usize,
            b: *const $t,
            ldb: usize,
            t: usize,
            c: *mut $t,
            ldc: usize,
            ncols: usize,
            add: bool,
        ) {
            const NR: usize = 2 * $lanes;
            const MR: usize = super::MR;
            for (g, rows) in [(0, m.min(MR)), (1, m.saturating_sub(MR))] {
                if rows == 0 {
                    continue;
                }
                let (a, c) = (a.add(g * sa), c.add(g * MR * ldc));
                for q in (0..ncols).step_by(NR) {
                    let nc = NR.min(ncols - q);
                    $panel(rows, a, b.add(q), ldb, t, c.add(q), ldc, nc, add);
                }
            }
        }

        /// One panel: `2·lanes` columns (two registers) per row of one micro-panel.
        ///
        /// # Safety
        /// As `$mk` for one micro-panel (`m ≤ MR`) and `ncols ≤ 2·lanes`.
        #[allow(clippy::too_many_arguments)]
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $panel(
            m: usize,
            a: *const $t,
            b: *const $t,
            ldb: usize,
            t: usize,
            c: *mut $t,
            ldc: usize,
            ncols: usize,
            add: bool,
        ) {
            const MR: usize = super::MR;
            const L: usize = $lanes;
            let mut acc0 = [$zero(); MR];
            let mut acc1 = [$zero(); MR];
            let step = |p: usize, acc0: &mut [$v; MR], acc1: &mut [$v; MR]| {
                // SAFETY (this block and the loads below): in bounds by the caller's contract.
                let b0 = $load(b.add(p * ldb));
                let b1 = $load(b.add(p * ldb + L));
                let ap = a.add(p * MR);
                for i in 0..MR {
                    let av = $bcast(&*ap.add(i));
                    acc0[i] = $fmadd(av, b0, acc0[i]);
                    acc1[i] = $fmadd(av, b1, acc1[i]);
                }
            };
            // Unrolled by 4: the same operations in the same order (measured ~6% fewer cycles).
            let mut p = 0;
            while p + 4 <= t {
                step(p, &mut acc0, &mut acc1);
                step(p + 1, &mut acc0, &mut acc1);
                step(p + 2, &mut acc0, &mut acc1);
                step(p + 3, &mut acc0, &mut acc1);
                p += 4;
            }
            while p < t {
                step(p, &mut acc0, &mut acc1);
                p += 1;
            }
            for i in 0..m {
                let ci = c.add(i * ldc);
                if ncols == 2 * L {
                    let (mut x0, mut x1) = (acc0[i], acc1[i]);
                    if add {
                        x0 = $add($load(ci), x0);
                        x1 = $add($load(ci.add(L)), x1);
                    }
                    $store(ci, x0);
                    $store(ci.add(L), x1);
                } else {
                    let mut tmp = [0 as $t; 2 * L];
                    $store(tmp.as_mut_ptr(), acc0[i]);
                    $store(tmp.as_mut_ptr().add(L), acc1[i]);
                    for (j, &x) in tmp.iter().enumerate().take(ncols) {
                        let cij = &mut *ci.add(j);
                        *cij = if add { *cij + x } else { x };
                    }
                }
            }
        }

        exp_cols_kernel!(
            "avx2,fma",
            "AVX2 and FMA",
            $exp_cols,
            $col_max,
            $scale_cols,
            $t,
            $lanes,
            $exp,
            $load,
            $set1,
            $add,
            $store,
            $sub,
            $mul,
            $max
        );
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    avx2_kernels!(
        mk_f32,
        panel_f32,
        exp_cols_f32,
        col_max_f32,
        scale_cols_f32,
        f32,
        __m256,
        8,
        crate::attention::exp::avx2::exp_ps,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_broadcast_ss,
        _mm256_fmadd_ps,
        _mm256_add_ps,
        _mm256_storeu_ps,
        _mm256_set1_ps,
        _mm256_sub_ps,
        _mm256_mul_ps,
        _mm256_max_ps
    );
    avx2_kernels!(
        mk_f64,
        panel_f64,
        exp_cols_f64,
        col_max_f64,
        scale_cols_f64,
        f64,
        __m256d,
        4,
        crate::attention::exp::avx2::exp_pd,
        _mm256_setzero_pd,
        _mm256_loadu_pd,
        _mm256_broadcast_sd,
        _mm256_fmadd_pd,
        _mm256_add_pd,
        _mm256_storeu_pd,
        _mm256_set1_pd,
        _mm256_sub_pd,
        _mm256_mul_pd,
        _mm256_max_pd
    );
}

/// The AVX-512F kernels of one float type: one 512-bit register `$v` of `$lanes` values is a
/// panel row (`NR` = `$lanes`), and a call takes `G` micro-panels of `A` (`G·MR` rows, 12
/// accumulators for `G` = 2: enough independent chains to keep both FMA pipes busy).
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_kernels {
    ($mk:ident, $panel:ident, $exp_cols:ident, $col_max:ident, $scale_cols:ident, $t:ty, $v:ty,
     $lanes:expr, $exp:path, $zero:ident, $load:ident, $set1:ident, $fmadd:ident, $add:ident, $store:ident,
     $sub:ident, $mul:ident, $max:ident) => {
        /// AVX-512F micro-kernel: `m` rows (12 accumulators over two micro-panels `sa` apart
        /// when `m > MR`) over every `lanes`-column panel `ncols` needs, in order.
        ///
        /// # Safety
        /// As `Float::micro_kernel`'s kernels, and the CPU supports AVX-512F.
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx512f")]
        pub unsafe fn $mk(
            m: usize,
            a: *const $t,
            sa: usize,
            b: *const $t,
            ldb: usize,
            t: usize,
            c: *mut $t,
            ldc: usize,
            ncols: usize,
            add: bool,
        ) {
            for q in (0..ncols).step_by($lanes) {
                let nc = ($lanes as usize).min(ncols - q);
                if m > super::MR {
                    $panel::<2>(m, a, sa, b.add(q), ldb, t, c.add(q), ldc, nc, add);
                } else {
                    $panel::<1>(m, a, sa, b.add(q), ldb, t, c.add(q), ldc, nc, add);
                }
            }
        }

        /// One panel of `lanes` columns (one register per row).
        ///
        /// # Safety
        /// As `$mk` with `ncols ≤ lanes`.
        #[allow(clippy::too_many_arguments)]
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn $panel<const G: usize>(
            m: usize,
            a: *const $t,
            sa: usize,
            b: *const $t,
            ldb: usize,
            t: usize,
            c: *mut $t,
            ldc: usize,
            ncols: usize,
            add: bool,
        ) {
            const MR: usize = super::MR;
            const L: usize = $lanes;
            let mut acc = [[$zero(); MR]; G];
            let step = |p: usize, acc: &mut [[$v; MR]; G]| {
                // SAFETY (this block and the loads below): in bounds by the caller's contract.
                let bp = $load(b.add(p * ldb));
                for (g, row) in acc.iter_mut().enumerate() {
                    let ap = a.add(g * sa + p * MR);
                    for (i, x) in row.iter_mut().enumerate() {
                        *x = $fmadd($set1(*ap.add(i)), bp, *x);
                    }
                }
            };
            // Unrolled by 4: the same operations in the same order.
            let mut p = 0;
            while p + 4 <= t {
                step(p, &mut acc);
                step(p + 1, &mut acc);
                step(p + 2, &mut acc);
                step(p + 3, &mut acc);
                p += 4;
            }
            while p < t {
                step(p, &mut acc);
                p += 1;
            }
            for i in 0..m {
                let ci = c.add(i * ldc);
                let x = acc[i / MR][i % MR];
                if ncols == L {
                    $store(ci, if add { $add($load(ci), x) } else { x });
                } else {
                    let mut tmp = [0 as $t; L];
                    $store(tmp.as_mut_ptr(), x);
                    for (j, &x) in tmp.iter().enumerate().take(ncols) {
                        let cij = &mut *ci.add(j);
                        *cij = if add { *cij + x } else { x };
                    }
                }
            }
        }

        exp_cols_kernel!(
            "avx512f",
            "AVX-512F",
            $exp_cols,
            $col_max,
            $scale_cols,
            $t,
            $lanes,
            $exp,
            $load,
            $set1,
            $add,
            $store,
            $sub,
            $mul,
            $max
        );
    };
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    avx512_kernels!(
        mk_f32,
        panel_f32,
        exp_cols_f32,
        col_max_f32,
        scale_cols_f32,
        f32,
        __m512,
        16,
        crate::attention::exp::avx512::exp_ps,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_set1_ps,
        _mm512_fmadd_ps,
        _mm512_add_ps,
        _mm512_storeu_ps,
        _mm512_sub_ps,
        _mm512_mul_ps,
        _mm512_max_ps
    );
    avx512_kernels!(
        mk_f64,
        panel_f64,
        exp_cols_f64,
        col_max_f64,
        scale_cols_f64,
        f64,
        __m512d,
        8,
        crate::attention::exp::avx512::exp_pd,
        _mm512_setzero_pd,
        _mm512_loadu_pd,
        _mm512_set1_pd,
        _mm512_fmadd_pd,
        _mm512_add_pd,
        _mm512_storeu_pd,
        _mm512_sub_pd,
        _mm512_mul_pd,
        _mm512_max_pd
    );
}

fn exp_cols_portable<F: Real>(
    s: &mut [F],
    rows: usize,
    lanes: usize,
    m: &[F],
    c: F,
    sum: &mut [F],
) {
    for row in s[..rows * BQ].chunks_exact_mut(BQ) {
        for ((x, &mi), si) in row[..lanes].iter_mut().zip(m).zip(sum.iter_mut()) {
            *x = F::vexp((*x - mi) * c);
            *si = *si + *x;
        }
    }
}

/// One lane-wise operation (`Float::exp_cols`, `col_max`, `scale_cols`) with the fastest
/// instruction set this CPU has: the AVX-512F version, else AVX2 + FMA, else the portable
/// definition (all the same bits). `lanes` must be a multiple of `NR` (checked here: the SIMD
/// versions step through whole registers).
macro_rules! lane_op {
    ($simd:ident, $portable:ident, $s:expr, $rows:expr, $lanes:expr $(, $arg:expr)*) => {{
        assert!($lanes.is_multiple_of(<Self as Float>::NR), "lanes must be whole panels");
        #[cfg(target_arch = "x86_64")]
        if has_avx512() {
            // SAFETY: AVX-512F detected; the lengths are asserted inside.
            return unsafe { avx512::$simd($s, $rows, $lanes $(, $arg)*) };
        }
        #[cfg(target_arch = "x86_64")]
        if has_avx2_fma() {
            // SAFETY: AVX2 and FMA detected; the lengths are asserted inside.
            return unsafe { avx2::$simd($s, $rows, $lanes $(, $arg)*) };
        }
        $portable($s, $rows, $lanes $(, $arg)*)
    }};
}

/// `Float` for one type: its panel width, scalar operations, the AVX2 kernels where the CPU
/// has them (else the portable ones, which return the same bits) and its thread's scratch.
macro_rules! float_impl {
    ($t:ty, $nr:expr, $vexp:path, $mk:ident, $exp_cols:ident, $col_max:ident,
     $scale_cols:ident, $scratch:ident, $workspace:ident) => {
        impl Float for $t {
            const NR: usize = $nr;
            #[inline]
            fn fma(a: $t, b: $t, c: $t) -> $t {
                a.mul_add(b, c)
            }
            #[inline]
            fn vexp(x: $t) -> $t {
                $vexp(x)
            }
            fn rows_per_call() -> usize {
                if has_avx512() {
                    2 * MR
                } else {
                    MR
                }
            }
            fn micro_kernel() -> crate::float::MicroKernel<$t> {
                #[cfg(target_arch = "x86_64")]
                if has_avx512() {
                    return avx512::$mk;
                }
                #[cfg(target_arch = "x86_64")]
                if has_avx2_fma() {
                    return avx2::$mk;
                }
                mk_portable::<$t, $nr>
            }
            fn exp_cols(s: &mut [$t], rows: usize, lanes: usize, m: &[$t], c: $t, sum: &mut [$t]) {
                lane_op!($exp_cols, exp_cols_portable, s, rows, lanes, m, c, sum)
            }
            fn col_max(s: &[$t], rows: usize, lanes: usize, m: &mut [$t]) {
                lane_op!($col_max, col_max_portable, s, rows, lanes, m)
            }
            fn scale_cols(s: &mut [$t], rows: usize, lanes: usize, a: &[$t]) {
                lane_op!($scale_cols, scale_cols_portable, s, rows, lanes, a)
            }
            fn with_scratch<R>(f: impl FnOnce(&mut Scratch<$t>) -> R) -> R {
                $scratch.with(|c| f(&mut c.borrow_mut()))
            }
            fn with_workspace<R>(f: impl FnOnce(&std::cell::RefCell<Workspace<$t>>) -> R) -> R {
                $workspace.with(f)
            }
        }
    };
}

float_impl!(
    f32,
    16,
    exp::exp_f32,
    mk_f32,
    exp_cols_f32,
    col_max_f32,
    scale_cols_f32,
    SCRATCH_F32,
    WORKSPACE_F32
);
float_impl!(
    f64,
    8,
    exp::exp_f64,
    mk_f64,
    exp_cols_f64,
    col_max_f64,
    scale_cols_f64,
    SCRATCH_F64,
    WORKSPACE_F64
);

/// Length of the packed form of `rows × t` ([`pack_a_into`]).
pub(crate) fn packed_len(rows: usize, t: usize) -> usize {
    rows.div_ceil(MR) * t * MR
}

/// Packs the rows `0..rows` of `x` (`t` columns) into micro-panels of [`MR`] rows in `out`
/// (at least [`packed_len`] long): group `g` holds `x[g·MR + i, p]` at `g·t·MR + p·MR + i`,
/// zero for rows past `rows`.
pub(crate) fn pack_a_into<F: Real>(x: ndarray::ArrayView2<F>, out: &mut [F]) {
    let (rows, t) = x.dim();
    let len = packed_len(rows, t);
    let pad = rows % MR;
    if pad != 0 {
        let g = rows / MR;
        for p in 0..t {
            for i in pad..MR {
                out[g * t * MR + p * MR + i] = F::zero();
            }
        }
    }
    let out = &mut out[..len];
    if rows > 1 && x.strides()[0] == 1 {
        // Column-contiguous (a transposed view such as `Vᵀ`): each column's run of `MR` rows is
        // one contiguous copy, instead of `MR` reads a row stride apart.
        // (Whole runs are copied as arrays of MR: a constant-size copy, not a memcpy call.)
        for (p, col) in x.columns().into_iter().enumerate() {
            let col = col.to_slice().expect("unit row stride");
            let runs = col.chunks_exact(MR);
            let tail = runs.remainder();
            for (g, run) in runs.enumerate() {
                let at = g * t * MR + p * MR;
                let run: &[F; MR] = run.try_into().expect("MR values");
                let dst: &mut [F; MR] = (&mut out[at..at + MR]).try_into().expect("MR values");
                *dst = *run;
            }
            if !tail.is_empty() {
                let at = (rows / MR) * t * MR + p * MR;
                out[at..at + tail.len()].copy_from_slice(tail);
            }
        }
        return;
    }
    for (r, row) in x.rows().into_iter().enumerate() {
        let dst = &mut out[(r / MR) * t * MR..(r / MR + 1) * t * MR];
        for (p, &v) in row.iter().enumerate() {
            dst[p * MR + r % MR] = v;
        }
    }
}

/// `x` (`t × cols`) as column panels of `NR` (the last padded with zeros), each contiguous:
/// panel `q` holds `x[p, q·NR + j]` at `q·t·NR + p·NR + j`. A panel is then `t·NR` consecutive
/// values: read row-major with the row stride a whole `[Wq | Wk | Wv]` would have (384 `f32`
/// at d = 128, 1536 bytes), the 128 rows of one panel fall into 8 of the L1's 64 sets, 16 lines
/// per 8-way set, and the projections ran at half the micro-kernel's speed.
pub(crate) fn pack_panels<F: Real>(x: ndarray::ArrayView2<F>) -> Vec<F> {
    let (t, cols) = x.dim();
    let nr = F::NR;
    let mut out = vec![F::zero(); cols.div_ceil(nr) * t * nr];
    for ((p, j), &v) in x.indexed_iter() {
        out[(j / nr) * t * nr + p * nr + j % nr] = v;
    }
    out
}

/// `C[r, :] (=|+=) Σ_p A[r, p]·B[p, :]` for `r < rows`: `A` packed by [`pack_a_into`] (`t` columns),
/// `B` row-major with row stride `ldb` and at least `ncols` rounded up to `NR` readable columns,
/// `C` row-major with row stride `ldc`, `ncols` columns written.
/// Consecutive micro-panels of `A` lie `sa` apart (`t·MR` when packed whole; a slice of keys
/// of a longer packing has its own stride).
#[allow(clippy::too_many_arguments)]
fn gemm<F: Real>(
    ap: &[F],
    sa: usize,
    rows: usize,
    t: usize,
    b: &[F],
    ldb: usize,
    c: &mut [F],
    ldc: usize,
    ncols: usize,
    add: bool,
) {
    let nr = F::NR;
    let panels = ncols.div_ceil(nr);
    let groups = rows.div_ceil(MR);
    assert!(sa >= t * MR, "gemm: micro-panels overlap");
    assert!(
        groups == 0 || ap.len() >= (groups - 1) * sa + t * MR,
        "gemm: A too short"
    );
    assert!(
        t == 0 || panels == 0 || b.len() >= (t - 1) * ldb + panels * nr,
        "gemm: B too short"
    );
    assert!(
        rows == 0 || c.len() >= (rows - 1) * ldc + ncols,
        "gemm: C too short"
    );
    // Rows per call: one micro-panel, or two where the CPU has the registers for them.
    let per_call = F::rows_per_call();
    let mk = F::micro_kernel();
    // Where `B` fits in L1, each call takes every column panel for its rows (its micro-panels
    // of A stay in L1 across them); else panel by panel, all rows for one panel of B before the
    // next (that panel stays in L1, A streams from L2). Every entry of C is the same FMA chain
    // either way: the order changes which products run first, not any result.
    let b_bytes = t * panels * nr * std::mem::size_of::<F>();
    let (step, width) = if b_bytes <= L1_B_BYTES {
        (panels * nr, ncols)
    } else {
        (nr, nr)
    };
    for q in (0..panels * nr).step_by(step.max(1)) {
        let nc = width.min(ncols - q);
        for g in (0..groups).step_by(per_call / MR) {
            let mr = per_call.min(rows - g * MR);
            // SAFETY: the asserts above: groups g, g + 1 (when mr > MR) of A have t·MR entries
            // at g·sa, B rows p < t hold `panels·NR` columns (q + nc of them from q), and C rows
            // g·MR..g·MR+mr hold `ncols` columns (q..q + nc written).
            unsafe {
                mk(
                    mr,
                    ap.as_ptr().add(g * sa),
                    sa,
                    b.as_ptr().add(q),
                    ldb,
                    t,
                    c.as_mut_ptr().add(g * MR * ldc + q),
                    ldc,
                    nc,
                    add,
                );
            }
        }
    }
}

/// `C = A·B` for a row-major `A` (`m × t`) and `B` from [`pack_panels`] (`t × ncols`) into `c`
/// (`m × ncols`, row-major): rows in blocks of [`BQ`], in parallel when `parallel`, else on the
/// calling thread; within a block, panel by panel (the panel stays in L1 while the block's rows
/// pass). Each entry is one in-order FMA chain over `p`, so the bits are the same either way.
/// The packed rows of `A` live in each thread's [`Scratch`].
pub(crate) fn matmul_into<F: Real>(
    a: ndarray::ArrayView2<F>,
    bp: &[F],
    ncols: usize,
    c: &mut [F],
    parallel: bool,
) {
    matmul_then(a, bp, ncols, c, parallel, &|_, _| {});
}

/// [`matmul_into`], then `after(r0, block)` for each block of rows `r0..` of `C` (`block` its
/// `rows × ncols` values), called by the thread that computed it while it is still in cache.
/// The blocks are the rows `[k·BQ, (k + 1)·BQ)` (the last shorter), each passed exactly once.
pub(crate) fn matmul_then<F: Real>(
    a: ndarray::ArrayView2<F>,
    bp: &[F],
    ncols: usize,
    c: &mut [F],
    parallel: bool,
    after: &(dyn Fn(usize, &[F]) + Sync),
) {
    let (m, t) = a.dim();
    let nr = F::NR;
    let c = &mut c[..m * ncols];
    if ncols == 0 || m == 0 {
        return;
    }
    if t == 0 {
        c.fill(F::zero()); // empty sums
        for (blk, cb) in c.chunks(BQ * ncols).enumerate() {
            after(blk * BQ, cb);
        }
        return;
    }
    assert!(
        bp.len() >= ncols.div_ceil(nr) * t * nr,
        "matmul: B too short"
    );
    let block = |(blk, cb): (usize, &mut [F])| {
        let rows = cb.len() / ncols;
        F::with_scratch(|s| {
            let ap = sized(&mut s.pa, packed_len(rows, t));
            pack_a_into(a.slice(ndarray::s![blk * BQ..blk * BQ + rows, ..]), ap);
            for (q, panel) in bp.chunks(t * nr).take(ncols.div_ceil(nr)).enumerate() {
                let nc = nr.min(ncols - q * nr);
                gemm(
                    ap,
                    t * MR,
                    rows,
                    t,
                    panel,
                    nr,
                    &mut cb[q * nr..],
                    ncols,
                    nc,
                    false,
                );
            }
        });
        after(blk * BQ, cb);
    };
    if parallel {
        c.par_chunks_mut(BQ * ncols).enumerate().for_each(block);
    } else {
        c.chunks_mut(BQ * ncols).enumerate().for_each(block);
    }
}

/// A pointer into a buffer that the blocks of one parallel product share, each writing only
/// its own range of it (see [`pack_rows_at`], [`pack_vt_rows_at`]).
#[derive(Clone, Copy)]
pub(crate) struct Shared<F>(pub(crate) *mut F);
// SAFETY: the pointer is only written through by the `unsafe` functions below, whose callers
// guarantee that no two threads write the same range and that the buffer outlives them.
unsafe impl<F: Send> Send for Shared<F> {}
// SAFETY: as above.
unsafe impl<F: Send> Sync for Shared<F> {}

impl<F> Shared<F> {
    /// The pointer `k` values further (only dereferenced under the functions' contracts).
    pub(crate) fn offset(self, k: usize) -> Self {
        Shared(self.0.wrapping_add(k))
    }
}

/// Rows `r0..r0 + x.nrows()` of the packing by [`pack_a_into`] of an `n × t` matrix at `out`:
/// `x`'s rows packed at `out + r0·t` (group `r0/MR` on), a padded last group zero-filled.
///
/// # Safety
/// `r0` is a multiple of [`MR`]; `out` points to a buffer of [`packed_len`]`(n, t)` values with
/// `r0 + x.nrows() ≤ n` (or `= n` for a partial last group), and no other thread accesses
/// `out[r0·t .. r0·t + packed_len(x.nrows(), t)]` meanwhile.
pub(crate) unsafe fn pack_rows_at<F: Real>(x: ndarray::ArrayView2<F>, r0: usize, out: Shared<F>) {
    debug_assert!(r0.is_multiple_of(MR));
    let (rows, t) = x.dim();
    // SAFETY: the caller's contract.
    let dst = unsafe { std::slice::from_raw_parts_mut(out.0.add(r0 * t), packed_len(rows, t)) };
    pack_a_into(x, dst);
}

/// Keys `r0..r0 + v.nrows()` of the packing by [`pack_a_into`] of `Vᵀ` (`dv × n`) at `out`, from
/// `v`'s rows (`rows × dv`): `V[j, g·MR + i]` at `g·n·MR + (r0 + j)·MR + i`, zero for `g·MR + i ≥ dv`.
/// The same values [`pack_a_into`] writes for `Vᵀ` whole.
///
/// # Safety
/// `out` points to a buffer of [`packed_len`]`(dv, n)` values, `r0 + v.nrows() ≤ n`, and no other
/// thread accesses the ranges `g·n·MR + [r0·MR, (r0 + rows)·MR)` meanwhile.
pub(crate) unsafe fn pack_vt_rows_at<F: Real>(
    v: ndarray::ArrayView2<F>,
    r0: usize,
    n: usize,
    out: Shared<F>,
) {
    let (rows, dv) = v.dim();
    debug_assert!(r0 + rows <= n);
    for g in 0..dv.div_ceil(MR) {
        // SAFETY: the caller's contract.
        let dst =
            unsafe { std::slice::from_raw_parts_mut(out.0.add(g * n * MR + r0 * MR), rows * MR) };
        let (c0, w) = (g * MR, MR.min(dv - g * MR));
        for (row, d) in v.rows().into_iter().zip(dst.chunks_exact_mut(MR)) {
            match row.as_slice() {
                Some(r) if w == MR => {
                    let run: &[F; MR] = r[c0..c0 + MR].try_into().expect("MR values");
                    let d: &mut [F; MR] = d.try_into().expect("MR values");
                    *d = *run;
                }
                _ => {
                    for (i, x) in d.iter_mut().enumerate() {
                        *x = if i < w { row[c0 + i] } else { F::zero() };
                    }
                }
            }
        }
    }
}

/// One head's operands, packed once and shared by all tiles.
pub(crate) struct Head<'a, F> {
    /// Queries: the rows for sequence positions `q0 …` (at most n × dk).
    pub q: ndarray::ArrayView2<'a, F>,
    /// The sequence position of `q`'s first row (0 unless only the last queries are asked for).
    pub q0: usize,
    /// `K` (n × dk) packed by [`pack_a_into`]: groups of 6 keys.
    pub kp: &'a [F],
    /// `Vᵀ` (dv × n) packed by [`pack_a_into`]: groups of 6 value columns.
    pub vtp: &'a [F],
    /// Sequence length.
    pub n: usize,
    /// Query/key width.
    pub dk: usize,
    /// Value width.
    pub dv: usize,
    /// Whether query `i` sees only keys `j ≤ i`.
    pub causal: bool,
    /// `1/√d_k`.
    pub inv_scale: F,
}

impl<F: Real> Head<'_, F> {
    /// `Q_tᵀ` for queries `i0..i1` into `qt`: `dk × BQ` row-major, columns past the tile zero.
    fn qt(&self, i0: usize, i1: usize, qt: &mut [F]) {
        qt[..self.dk * BQ].fill(F::zero());
        for (r, row) in self
            .q
            .slice(ndarray::s![i0 - self.q0..i1 - self.q0, ..])
            .rows()
            .into_iter()
            .enumerate()
        {
            for (p, &v) in row.iter().enumerate() {
                qt[p * BQ + r] = v;
            }
        }
    }

    /// `Sᵀ[jj, r] = Σ_p K[j0 + jj, p]·Q[i0 + r, p]` for `jj < jn` (`j0` a multiple of [`MR`]) and
    /// lanes `r < lanes`, into `st` (`jn × BQ` row-major); causal entries `j > i` become −∞.
    fn scores_t(&self, qt: &[F], i0: usize, lanes: usize, j0: usize, jn: usize, st: &mut [F]) {
        debug_assert!(j0.is_multiple_of(MR));
        let kp = &self.kp[j0 * self.dk..];
        gemm(kp, self.dk * MR, jn, self.dk, qt, BQ, st, BQ, lanes, false);
        if self.causal && j0 + jn > i0 + 1 {
            let neg_inf = F::from_f64(f64::NEG_INFINITY);
            for jj in 0..jn {
                let j = j0 + jj;
                // Lanes r with i0 + r < j are masked.
                let masked = j.saturating_sub(i0).min(BQ);
                st[jj * BQ..jj * BQ + masked].fill(neg_inf);
            }
        }
    }

    /// `Oᵀ[c, r] (+)= Σ_{jj<jn} V[j0 + jj, c]·P[jj, r]` for `c < dv` and lanes `r < lanes`, with
    /// `P` given as `jn × BQ` row-major; `Oᵀ` is `dv × BQ` row-major.
    fn times_v(&self, p: &[F], lanes: usize, j0: usize, jn: usize, ot: &mut [F], add: bool) {
        // Vᵀ's micro-panels hold all n keys (n·MR apart); the block's keys start at j0.
        let a = &self.vtp[j0 * MR..];
        gemm(a, self.n * MR, self.dv, jn, p, BQ, ot, BQ, lanes, add);
    }

    /// Keys query rows `i0..i1` need: all n, or `0..i1` under the causal mask.
    fn key_end(&self, i1: usize) -> usize {
        if self.causal {
            i1
        } else {
            self.n
        }
    }
}

/// Per lane: `s[j, i] ← s[j, i]·a[i]` over the `rows × BQ` block `s` (`Float::scale_cols`).
fn scale_cols_portable<F: Real>(s: &mut [F], rows: usize, lanes: usize, a: &[F]) {
    for row in s[..rows * BQ].chunks_exact_mut(BQ) {
        for (x, &ai) in row[..lanes].iter_mut().zip(a) {
            *x = *x * ai;
        }
    }
}

/// Per lane: `m[i] ← max(m[i], max_j s[j, i])` over the `rows × BQ` block `s` (the definition
/// `Float::col_max`'s SIMD versions reproduce).
fn col_max_portable<F: Real>(s: &[F], rows: usize, lanes: usize, m: &mut [F]) {
    for row in s[..rows * BQ].chunks_exact(BQ) {
        for (mi, &x) in m.iter_mut().zip(&row[..lanes]) {
            if x > *mi {
                *mi = x;
            }
        }
    }
}

/// The fused forward of query rows `i0..i1` of one head (online softmax over key blocks; see the
/// module docs) into `o`: row-major, `(i1 − i0) × dv`, computed as consecutive tiles of `tw`
/// rows (at most [`BQ`]). Where the keys and values outgrow L2 ([`tiles_per_pass`]), several
/// tiles take each key block in turn, so the block is read from L3 once for all of them; each
/// tile's operations and their order are those of a tile alone. Buffers from this thread's
/// [`Scratch`].
pub(crate) fn forward_tile<F: Real>(h: &Head<'_, F>, i0: usize, i1: usize, tw: usize, o: &mut [F]) {
    let count = (i1 - i0).div_ceil(tw);
    assert!(
        tw <= BQ && (1..=MAX_PASS).contains(&count),
        "forward_tile: 1 to {MAX_PASS} tiles of at most {BQ} rows"
    );
    let (qlen, olen) = (h.dk * BQ, h.dv * BQ);
    F::with_scratch(|s| {
        let qt = sized(&mut s.qt, count * qlen);
        let st = sized(&mut s.st, key_block::<F>(h.n) * BQ);
        let ot = sized(&mut s.ot, count * olen);
        ot.fill(F::zero());
        let neg_inf = F::from_f64(f64::NEG_INFINITY);
        let mut states = [Online {
            i0: 0,
            rows: 0,
            m: [neg_inf; BQ],
            l: [F::zero(); BQ],
        }; MAX_PASS];
        for (t, state) in states.iter_mut().enumerate().take(count) {
            let (a, b) = (i0 + t * tw, (i0 + (t + 1) * tw).min(i1));
            h.qt(a, b, &mut qt[t * qlen..(t + 1) * qlen]);
            state.i0 = a;
            state.rows = b - a;
        }
        let bk = key_block::<F>(h.n);
        let kend = h.key_end(i1);
        let mut j0 = 0;
        while j0 < kend {
            for (t, state) in states.iter_mut().enumerate().take(count) {
                let end = h.key_end(state.i0 + state.rows);
                if j0 < end {
                    let q = &qt[t * qlen..(t + 1) * qlen];
                    let ob = &mut ot[t * olen..(t + 1) * olen];
                    online_block(h, state, q, st, ob, j0, bk.min(end - j0));
                }
            }
            j0 += bk;
        }
        for (t, state) in states.iter().enumerate().take(count) {
            let r0 = state.i0 - i0;
            let out = &mut o[r0 * h.dv..(r0 + state.rows) * h.dv];
            finish(h, state, &mut ot[t * olen..(t + 1) * olen], out);
        }
    })
}

/// Most tiles [`forward_tile`] takes through the key blocks together.
pub(crate) const MAX_PASS: usize = 4;

/// Tiles that take each key block in turn (see [`forward_tile`]): one while one head's keys
/// and values take at most 8 MiB, else [`MAX_PASS`]. Past that, a quarter of the 32 MB L3
/// this VM's two cores share with their neighbours, every tile read them from further out:
/// (8192, 128) f64 (16 MiB) 0.41 against 0.45 s unmasked, 0.22 against 0.24 s causal (min of 3
/// alternating runs); at 4 and 8 MiB (4096 f64, 8192 f32) passes of four measured the same or
/// 2 % slower, so they keep one.
pub(crate) fn tiles_per_pass<F>(n: usize, dk: usize, dv: usize) -> usize {
    if n * (dk + dv) * std::mem::size_of::<F>() <= 8 << 20 {
        1
    } else {
        MAX_PASS
    }
}

/// One tile's running state of the online softmax: its first query, its rows, and per lane
/// the running maximum `m` and sum `l`.
#[derive(Clone, Copy)]
struct Online<F> {
    i0: usize,
    rows: usize,
    m: [F; BQ],
    l: [F; BQ],
}

/// Keys `j0..j0 + jn` for one tile (queries `qt`, output accumulator `ot`), with `st` the
/// block's scratch.
fn online_block<F: Real>(
    h: &Head<'_, F>,
    state: &mut Online<F>,
    qt: &[F],
    st: &mut [F],
    ot: &mut [F],
    j0: usize,
    jn: usize,
) {
    // The lanes computed: the tile's queries rounded up to whole panels (a short last tile
    // costs its own width, not BQ's).
    let lanes = state.rows.next_multiple_of(F::NR);
    let neg_inf = F::from_f64(f64::NEG_INFINITY);
    let Online { i0, m, l, .. } = state;
    h.scores_t(qt, *i0, lanes, j0, jn, st);
    let mut m_new = *m;
    F::col_max(st, jn, lanes, &mut m_new);
    // A lane with nothing visible yet (impossible for the causal mask, whose first block
    // holds key 0) keeps m = −∞; exp(−∞ − (−∞)) would be NaN, so shift by 0 instead: its
    // scores are all −∞ and give exactly 0.
    let shift: [F; BQ] = std::array::from_fn(|r| {
        if m_new[r] == neg_inf {
            F::zero()
        } else {
            m_new[r]
        }
    });
    let mut lb = [F::zero(); BQ];
    F::exp_cols(st, jn, lanes, &shift, h.inv_scale, &mut lb);
    let first = j0 == 0;
    if first {
        // l = 0·α + lb = lb and Oᵀ = 0·α = 0 exactly, so the first block needs no α (48
        // scalar exponentials a tile) and its product writes Oᵀ instead of adding to zeros
        // (0 + x = x: an FMA chain started at +0 never ends at −0). The same bits.
        *l = lb;
    } else {
        let mut rescale = false;
        let alpha: [F; BQ] = std::array::from_fn(|r| {
            if m_new[r] == m[r] {
                F::one()
            } else {
                rescale = true;
                F::vexp((m[r] - m_new[r]) * h.inv_scale)
            }
        });
        for r in 0..BQ {
            l[r] = if m_new[r] == m[r] {
                l[r] + lb[r]
            } else {
                l[r] * alpha[r] + lb[r]
            };
        }
        if rescale {
            F::scale_cols(ot, h.dv, lanes, &alpha);
        }
    }
    *m = m_new;
    h.times_v(st, lanes, j0, jn, ot, !first);
}

/// O = (Oᵀ/l)ᵀ for one tile into `o` (`rows × dv`): every row of Oᵀ divided lane by lane
/// (contiguous: vectorised), then transposed (each entry the same single division as dividing
/// it in place).
fn finish<F: Real>(h: &Head<'_, F>, state: &Online<F>, ot: &mut [F], o: &mut [F]) {
    let rows = state.rows;
    for row in ot.chunks_exact_mut(BQ) {
        for (x, &li) in row[..rows].iter_mut().zip(&state.l) {
            *x = *x / li;
        }
    }
    for (r, orow) in o.chunks_exact_mut(h.dv).take(rows).enumerate() {
        for (c, x) in orow.iter_mut().enumerate() {
            *x = ot[c * BQ + r];
        }
    }
}

/// The weights path for query rows `i0..i1`: writes rows of `A` into `a` (row-major,
/// `(i1 − i0) × n`) and `O = A·V` for those rows into `o` (`(i1 − i0) × dv`; each entry one
/// in-order FMA chain over the keys of the returned `A`).
pub(crate) fn weights_tile<F: Real>(
    h: &Head<'_, F>,
    i0: usize,
    i1: usize,
    a: &mut [F],
    o: &mut [F],
) {
    let rows = i1 - i0;
    let lanes = rows.next_multiple_of(F::NR);
    let n = h.n;
    let kend = h.key_end(i1);
    F::with_scratch(|s| {
        let qt = sized(&mut s.qt, h.dk * BQ);
        let st = sized(&mut s.st, kend.div_ceil(MR) * MR * BQ);
        let ot = sized(&mut s.ot, h.dv * BQ);
        h.qt(i0, i1, qt);
        h.scores_t(qt, i0, lanes, 0, kend, st);
        let mut m = [F::from_f64(f64::NEG_INFINITY); BQ];
        F::col_max(st, kend, lanes, &mut m);
        let mut l = [F::zero(); BQ];
        F::exp_cols(st, kend, lanes, &m, h.inv_scale, &mut l);
        for row in st[..kend * BQ].chunks_exact_mut(BQ) {
            for (x, &li) in row[..lanes].iter_mut().zip(&l) {
                *x = *x / li;
            }
        }
        // A rows (keys past kend are masked for every row of the tile and are 0).
        for r in 0..rows {
            a[r * n + kend..(r + 1) * n].fill(F::zero());
        }
        // Transposed in blocks of 16 keys: each row of `A` is written in runs of 16 contiguous
        // values (a 64-byte line in f32), and the 16 rows of `st` a block reads stay in L1.
        // (Row by row with the lanes inner, every write landed n values from the last.)
        for jb in (0..kend).step_by(16) {
            let je = (jb + 16).min(kend);
            for r in 0..rows {
                for (j, x) in (jb..je).zip(&mut a[r * n + jb..r * n + je]) {
                    *x = st[j * BQ + r];
                }
            }
        }
        h.times_v(st, lanes, 0, kend, ot, false);
        for c in 0..h.dv {
            for r in 0..rows {
                o[r * h.dv + c] = ot[c * BQ + r];
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SIMD `col_max` (whichever this CPU runs) keeps what the portable comparison keeps,
    /// bit for bit, on the values where a `max` instruction could differ from `x > m`: NaN in
    /// either place, `±0` against `∓0`, `±∞`.
    #[test]
    fn col_max_keeps_what_the_portable_comparison_keeps() {
        fn run<F: Real>(bits: impl Fn(F) -> u64) {
            let specials = [
                f64::NAN,
                -0.0,
                0.0,
                f64::NEG_INFINITY,
                f64::INFINITY,
                1.5,
                -2.0,
            ];
            let rows = 9;
            // Lanes below 24 see only NaN, ±0 and −∞ (so zeros of either sign and NaN survive
            // there), the others every special value.
            let s: Vec<F> = (0..rows * BQ)
                .map(|k| {
                    let kinds = if k % BQ < 24 { 4 } else { specials.len() };
                    F::from_f64(specials[(k * 7 + k / BQ) % kinds])
                })
                .collect();
            let start: Vec<F> = (0..BQ)
                .map(|k| F::from_f64(specials[(k * 3) % specials.len()]))
                .collect();
            let (mut simd, mut portable) = (start.clone(), start);
            F::col_max(&s, rows, BQ, &mut simd);
            col_max_portable(&s, rows, BQ, &mut portable);
            let b = |v: &[F]| v.iter().map(|&x| bits(x)).collect::<Vec<_>>();
            assert_eq!(b(&simd), b(&portable));
            let negative_zero = |x: &F| bits(*x) == bits(F::zero() * F::from_f64(-1.0));
            assert!(portable.iter().any(|x| x != x), "a NaN kept");
            assert!(portable.iter().any(negative_zero), "a −0 kept");
            assert!(
                portable.iter().any(|x| bits(*x) == bits(F::zero())),
                "a +0 kept"
            );
        }
        run::<f32>(|x| u64::from(x.to_bits()));
        run::<f64>(f64::to_bits);
    }

    #[test]
    fn panels_are_contiguous_and_the_product_reads_them_as_b() {
        // 5 × 21: one whole f32 panel and a padded one (two panels of 8 in f64 plus 5 columns).
        let b = ndarray::Array2::from_shape_fn((5, 21), |(p, j)| (p * 100 + j) as f64 + 0.5);
        let nr = <f64 as Float>::NR;
        let bp = pack_panels(b.view());
        assert_eq!(bp.len(), 21_usize.div_ceil(nr) * 5 * nr);
        for p in 0..5 {
            for j in 0..21_usize.div_ceil(nr) * nr {
                let want = if j < 21 { b[[p, j]] } else { 0.0 };
                assert_eq!(bp[(j / nr) * 5 * nr + p * nr + j % nr], want, "p {p} j {j}");
            }
        }
        // 50 rows (a BQ block and 2 more), serial and parallel: each entry the in-order chain.
        let a = ndarray::Array2::from_shape_fn((50, 5), |(i, p)| ((i * 5 + p) as f64).sin());
        for parallel in [false, true] {
            let mut c = vec![f64::NAN; 50 * 21];
            matmul_into(a.view(), &bp, 21, &mut c, parallel);
            for i in 0..50 {
                for j in 0..21 {
                    let want = (0..5).fold(0.0, |acc, p| a[[i, p]].mul_add(b[[p, j]], acc));
                    assert_eq!(c[i * 21 + j], want, "i {i} j {j}");
                }
            }
        }
    }

    #[test]
    fn packing_by_blocks_of_rows_gives_the_whole_packing() {
        // K (n × 5) and V (n × 9: a padded group of value columns) in blocks of 12 rows and a
        // last of 5, as the projection's blocks pack them, against pack_a_into of K and Vᵀ.
        let n = 29;
        let k = ndarray::Array2::from_shape_fn((n, 5), |(r, p)| (r * 10 + p) as f64 + 0.5);
        let v = ndarray::Array2::from_shape_fn((n, 9), |(r, c)| (r * 100 + c) as f64 - 0.25);
        let (mut kw, mut vw) = (vec![0.0; packed_len(n, 5)], vec![0.0; packed_len(9, n)]);
        pack_a_into(k.view(), &mut kw);
        pack_a_into(v.t(), &mut vw);
        let (mut kb, mut vb) = (vec![f64::NAN; kw.len()], vec![f64::NAN; vw.len()]);
        let (kp, vp) = (Shared(kb.as_mut_ptr()), Shared(vb.as_mut_ptr()));
        for r0 in (0..n).step_by(12) {
            let r1 = (r0 + 12).min(n);
            // SAFETY: r0 is a multiple of MR; the buffers have the whole packings' lengths and
            // this thread alone writes them.
            unsafe {
                pack_rows_at(k.slice(ndarray::s![r0..r1, ..]), r0, kp);
                pack_vt_rows_at(v.slice(ndarray::s![r0..r1, ..]), r0, n, vp);
            }
        }
        assert_eq!(kb, kw);
        assert_eq!(vb, vw);
    }

    #[test]
    fn a_pass_of_tiles_gives_each_tile_its_own_bits() {
        // 300 keys (f32 blocks of 132, 132, 36; f64 of 66), queries 7..177 as one pass of four
        // tiles (widths 48 and 32, the last short) against each tile alone; masked and not.
        fn run<F: Real>(bits: impl Fn(F) -> u64) {
            let (n, dk, dv) = (300, 8, 5);
            let x = |r: usize, c: usize, s: f64| F::from_f64(((r * 31 + c * 7) as f64 * s).sin());
            let q = ndarray::Array2::from_shape_fn((n, dk), |(r, c)| x(r, c, 0.37));
            let k = ndarray::Array2::from_shape_fn((n, dk), |(r, c)| x(r, c, 0.91));
            let v = ndarray::Array2::from_shape_fn((n, dv), |(r, c)| x(r, c, 1.3));
            let mut kp = vec![F::zero(); packed_len(n, dk)];
            let mut vtp = vec![F::zero(); packed_len(dv, n)];
            pack_a_into(k.view(), &mut kp);
            pack_a_into(v.t(), &mut vtp);
            for causal in [false, true] {
                let h = Head {
                    q: q.view(),
                    q0: 0,
                    kp: &kp,
                    vtp: &vtp,
                    n,
                    dk,
                    dv,
                    causal,
                    inv_scale: F::from_f64(1.0 / (dk as f64).sqrt()),
                };
                for tw in [48, 32] {
                    let (i0, i1) = (7, (7 + 4 * tw - 13).min(n));
                    let mut pass = vec![F::zero(); (i1 - i0) * dv];
                    forward_tile(&h, i0, i1, tw, &mut pass);
                    let mut alone = vec![F::zero(); (i1 - i0) * dv];
                    for a in (i0..i1).step_by(tw) {
                        let b = (a + tw).min(i1);
                        forward_tile(&h, a, b, tw, &mut alone[(a - i0) * dv..(b - i0) * dv]);
                    }
                    let b = |v: &[F]| v.iter().map(|&x| bits(x)).collect::<Vec<_>>();
                    assert_eq!(b(&pass), b(&alone), "causal {causal} tw {tw}");
                }
            }
        }
        run::<f32>(|x| u64::from(x.to_bits()));
        run::<f64>(f64::to_bits);
    }

    #[test]
    fn tiles_narrow_only_where_they_balance_the_threads() {
        // (256, 2 threads): 3 tiles of 48 on the busier thread (144 queries) against 4 of 32
        // (128); (1024, 2): 11·48 = 528 against 16·32 = 512; (4096, 2): 43·48 = 2064 against
        // 2048, under 3 % better, so 48 stays. One thread takes every tile, whatever their width.
        assert_eq!(tile_rows(256, 2), 32);
        assert_eq!(tile_rows(1024, 2), 32);
        assert_eq!(tile_rows(4096, 2), BQ);
        assert_eq!(
            tile_rows(301, 2),
            32,
            "the size the bits-across-threads test runs"
        );
        for nq in [1, 16, 47, 48, 49, 256, 1000, 4096] {
            assert_eq!(tile_rows(nq, 1), BQ, "nq {nq}");
            for threads in [2, 3, 8] {
                let w = tile_rows(nq, threads);
                assert!(
                    w <= BQ && w.is_multiple_of(16),
                    "nq {nq} threads {threads}: {w}"
                );
            }
        }
    }

    #[test]
    fn packing_follows_the_documented_layout_for_every_memory_order() {
        // 13 rows (two whole groups and one padded) and 36 (six whole groups, no padding), 5
        // columns; row-major, and the same values as a transposed (column-contiguous) view.
        for rows in [13, 36] {
            let x = ndarray::Array2::from_shape_fn((rows, 5), |(r, p)| (r * 10 + p) as f64 + 1.0);
            let xt_owned = x.t().as_standard_layout().to_owned(); // 5 × rows, row-major
            let views = [x.view(), xt_owned.t()];
            assert_eq!(
                views[1].strides()[0],
                1,
                "the second view is column-contiguous"
            );
            for v in views {
                let mut out = vec![f64::NAN; packed_len(rows, 5)];
                pack_a_into(v, &mut out);
                for g in 0..rows.div_ceil(MR) {
                    for p in 0..5 {
                        for i in 0..MR {
                            let r = g * MR + i;
                            let want = if r < rows { x[[r, p]] } else { 0.0 };
                            let got = out[g * 5 * MR + p * MR + i];
                            assert_eq!(got, want, "rows {rows} g {g} p {p} i {i}");
                        }
                    }
                }
            }
        }
    }
}
