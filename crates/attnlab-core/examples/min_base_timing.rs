//! Times the minimum-base searches on Su's table (release: `cargo run --release --example min_base_timing`).
use attnlab_core::spectrum::decay::min_base_for_context;
use attnlab_core::spectrum::min_base::certified_min_base;
use attnlab_core::spectrum::Watch;
use std::time::Instant;

fn main() {
    let lens: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let lens = if lens.is_empty() {
        (10..=20).map(|e| 1u64 << e).collect()
    } else {
        lens
    };
    for l in lens {
        let t = Instant::now();
        let (f, e) = attnlab_core::spectrum::min_base::default_family(128);
        let fam = attnlab_core::spectrum::min_base::Family {
            at: &f,
            exponents: if std::env::var("NO_TAYLOR").is_ok() {
                None
            } else {
                Some(e)
            },
        };
        let s = certified_min_base(&fam, l, &Watch::default()).unwrap();
        let t_new = t.elapsed().as_secs_f64();
        use attnlab_core::spectrum::min_base as mb;
        use std::sync::atomic::Ordering::Relaxed;
        println!(
            "prove {:.3} s ({} tries), hints {:.3} s, full {:.3} s",
            mb::T_PROVE.swap(0, Relaxed) as f64 * 1e-9,
            mb::N_PROVE.swap(0, Relaxed),
            mb::T_HINT.swap(0, Relaxed) as f64 * 1e-9,
            mb::T_FULL.swap(0, Relaxed) as f64 * 1e-9
        );
        println!("sweep {:.3} island {:.3} f32 {:.3}; steps {} scans {} unproven {} island {:?} f32 {:?}", mb::T_SWEEP.swap(0, Relaxed) as f64 * 1e-9, mb::T_ISLAND.swap(0, Relaxed) as f64 * 1e-9, mb::T_F32.swap(0, Relaxed) as f64 * 1e-9, s.proven_steps, s.full_scans, s.unproven_steps, s.island.map(|i| i.rel_width), s.f32_check);
        if std::env::var("NO_OLD").is_ok() {
            println!("L={l} new {:?} {t_new:.3}", s.base);
            continue;
        }
        let t = Instant::now();
        let old = min_base_for_context(128, l, |_| {}).unwrap();
        let t_old = t.elapsed().as_secs_f64();
        println!(
            "L={l:8} new {:?} ({t_new:.3} s, steps {}, scans {}, unproven {}) island {:?} f32 {:?} | old {:?} ({t_old:.3} s)",
            s.base, s.proven_steps, s.full_scans, s.unproven_steps, s.island.map(|i| (i.rel_width, i.fails_at)), s.f32_check, old.base
        );
    }
}
