//! The element operations every [`crate::Real`] type has for the fused attention kernel (FMA, the
//! vectorised exponential, the register-blocked micro-kernel) and one thread's working buffers.
//! A leaf: it imports nothing of the crate, so `numeric` can require it (`Real: Float`) from
//! below `attention`, which implements it for `f32` and `f64`.

/// The signature of [`Float::micro_kernel`]'s kernels: `(m, a, sa, b, ldb, t, c, ldc, ncols,
/// add)`, with the contract of its doc.
pub type MicroKernel<F> =
    unsafe fn(usize, *const F, usize, *const F, usize, usize, *mut F, usize, usize, bool);

/// The fused kernels' element operations, which every [`Real`] has (`Real: Float`, so code
/// generic over `Real` calls the kernels without a type test). Public only in name: this module
/// is private, so no other crate can implement or call it (a sealed trait). The implementations
/// for `f32` and `f64` are the kernels themselves, in `attention::kernel`.
pub trait Float: Copy + Sized + 'static {
    /// Panel width: columns of `B` per micro-kernel call (two 256-bit registers, one 512-bit).
    const NR: usize;
    /// `a·b + c` with one rounding.
    fn fma(a: Self, b: Self, c: Self) -> Self;
    /// The vectorised exponential's scalar definition ([`crate::attention::exp::exp_f32`] / [`crate::attention::exp::exp_f64`]).
    fn vexp(x: Self) -> Self;
    /// Rows of `A` the micro-kernel takes per call on this CPU: two micro-panels (12) where
    /// AVX-512F gives it the registers, else one (`MR` = 6).
    fn rows_per_call() -> usize;
    /// The micro-kernel with the fastest instruction set this CPU has: for rows `i < m` (the
    /// first `MR` = 6 from the micro-panel at `a`, the next from the one at `a + sa`) and each
    /// panel of `NR` columns `j` (as many as `ncols` needs, in order: the micro-panels of `a`
    /// stay in L1 across them), `acc[i][j] = Σ_p A[i, p]·b[p·ldb + j]` (one in-order FMA chain),
    /// then rows `i < m`, columns `j < ncols` of `c` become `acc` (or `c + acc` when `add`).
    ///
    /// Calling the kernel is `unsafe`: `a` must be readable at `p·MR + i` for `p < t`, `i < MR` (a micro-panel packed by the
    /// kernel), and when `m > MR` also `a + sa`; `b` at `p·ldb + j` for `p < t`,
    /// `j < ncols.div_ceil(NR)·NR`; `c` writable (and readable when `add`) at `i·ldc + j` for
    /// `i < m`, `j < ncols`; `m ≤ 2·MR`.
    ///
    /// Returned as a function pointer, chosen once per product (the CPU's features are looked
    /// up here, not at every call).
    fn micro_kernel() -> MicroKernel<Self>;
    /// For each row `j` of `s` (`rows × BQ`, row-major, `BQ` the kernel's queries per tile) and
    /// lane `i < lanes` (a multiple of `NR`, at most `BQ`):
    /// `s[j, i] ← exp((s[j, i] − m[i])·c)` and `sum[i] ← sum[i] + s[j, i]`, rows in order.
    fn exp_cols(s: &mut [Self], rows: usize, lanes: usize, m: &[Self], c: Self, sum: &mut [Self]);
    /// For each lane `i < lanes` of `s` (`rows × BQ`, row-major): `m[i] ← s[j, i]` whenever
    /// `s[j, i] > m[i]`, rows in order (a NaN never replaces `m[i]`; `+0` does not replace `−0`).
    fn col_max(s: &[Self], rows: usize, lanes: usize, m: &mut [Self]);
    /// For each row `j` of `s` (`rows × BQ`, row-major) and lane `i < lanes`:
    /// `s[j, i] ← s[j, i]·a[i]` (one correctly rounded product each: the same bits in every
    /// instruction set).
    fn scale_cols(s: &mut [Self], rows: usize, lanes: usize, a: &[Self]);
    /// Runs `f` with this thread's [`Scratch`] (grown on first use and kept, so repeated
    /// forwards allocate nothing for their tiles). `f` must not re-enter it (no rayon inside).
    fn with_scratch<R>(f: impl FnOnce(&mut Scratch<Self>) -> R) -> R;
    /// Runs `f` with this thread's cached [`Workspace`] cell (kept between calls; the caller
    /// borrows it, and falls back to a fresh workspace when a nested forward finds it in use).
    fn with_workspace<R>(f: impl FnOnce(&std::cell::RefCell<Workspace<Self>>) -> R) -> R;
}

/// One thread's working buffers: a projection block's packed rows (`pa`), a tile's `Q_tᵀ`
/// (`qt`), its score block (`st`) and its transposed output (`ot`).
#[derive(Debug, Default)]
pub struct Scratch<F> {
    pub(crate) pa: Vec<F>,
    pub(crate) qt: Vec<F>,
    pub(crate) st: Vec<F>,
    pub(crate) ot: Vec<F>,
}

/// Reusable buffers of the fused attention forward (`Attention::forward_output_into`): the
/// projections, the packed keys and values of every head, the tiles' outputs and the result.
/// Grown on first use and kept, so repeated calls on inputs of the same (or smaller) size
/// allocate nothing for them — with the per-thread tile buffers, nothing at all without a
/// query/key hook (a hook returns new arrays).
#[derive(Debug, Clone, Default)]
pub struct Workspace<T> {
    pub(crate) qkv: Vec<T>,
    pub(crate) kp: Vec<T>,
    pub(crate) vtp: Vec<T>,
    pub(crate) hooked: Vec<T>,
    pub(crate) gathered: Vec<T>,
    pub(crate) tiles: Vec<T>,
    pub(crate) concat: Vec<T>,
    pub(crate) out: Vec<T>,
    /// Where the last forward left its result: the head's tile outputs themselves (one head, no
    /// output projection: rows in order), or `out`.
    pub(crate) in_tiles: bool,
}

impl<T> Workspace<T> {
    /// An empty workspace (nothing allocated until the first call).
    pub fn new() -> Self {
        Workspace {
            qkv: Vec::new(),
            kp: Vec::new(),
            vtp: Vec::new(),
            hooked: Vec::new(),
            gathered: Vec::new(),
            tiles: Vec::new(),
            concat: Vec::new(),
            out: Vec::new(),
            in_tiles: false,
        }
    }

    /// The last forward's result, `len` values row-major (see `in_tiles`).
    pub(crate) fn result(&self, len: usize) -> &[T] {
        if self.in_tiles {
            &self.tiles[..len]
        } else {
            &self.out[..len]
        }
    }

    /// Bytes held by all the buffers (their capacities).
    pub(crate) fn bytes(&self) -> usize {
        let held = [
            &self.qkv,
            &self.kp,
            &self.vtp,
            &self.hooked,
            &self.gathered,
            &self.tiles,
            &self.concat,
            &self.out,
        ];
        held.iter().map(|v| v.capacity()).sum::<usize>() * std::mem::size_of::<T>()
    }
}
