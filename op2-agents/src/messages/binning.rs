//! A build's work on the host, in parallel: the senders that send, the
//! counting sort that bins them (histogram, prefix sum, stable scatter),
//! and the canonical order by id inside bins. Every step is cut into parts
//! of the data, not of the threads, and the scatter keeps each bin in
//! sender order: the result is the same bits on any thread count.

use std::sync::atomic::Ordering::Relaxed;

use op2_core::agent_support::{
    as_atomic, parts_for, piece, run_on_parts, run_on_pieces, select_indices, MAX_PARTS, PARALLEL_MIN,
};
use op2_core::Workers;

/// The senders `0..n` whose flag is not 0 (all without flags), in index
/// order, into `out`.
pub(super) fn select_senders(n: usize, flags: Option<&[i32]>, out: &mut Vec<u32>, workers: &dyn Workers) {
    match flags {
        None => {
            out.clear();
            out.extend(0..n as u32);
        }
        Some(flags) => select_indices(n, &|e| flags[e] != 0, out, workers),
    }
}

/// Room for `n` values in `v` (empty), or [`op2_core::Error::HostOutOfMemory`]
/// naming `what`.
fn reserve<T>(v: &mut Vec<T>, n: usize, what: &str) -> op2_core::Result<()> {
    v.try_reserve_exact(n).map_err(|_| op2_core::Error::HostOutOfMemory {
        name: what.to_string(),
        bytes: n.saturating_mul(std::mem::size_of::<T>()),
    })
}

/// The buffers of a counting sort, kept from build to build.
#[derive(Default)]
pub(super) struct SortBuffers {
    /// The bin of each sender sent (as `sent`).
    pub bins: Vec<u32>,
    /// Per bin, one count per part and the bin's total: `[bin][part + 1]`.
    hist: Vec<u32>,
    /// The first message of each bin, and the end.
    pub starts: Vec<i32>,
    /// The senders in bin order (in sender order inside a bin).
    pub order: Vec<u32>,
}

/// The bins of `sent`, in parallel, into `bins` (as long):
/// `bin_into(part_senders, part_bins)` gives the bins of a part of them.
pub(super) fn bin_senders(
    sent: &[u32],
    bin_into: &(dyn Fn(&[u32], &mut [u32]) + Sync),
    bins: &mut [u32],
    workers: &dyn Workers,
) {
    let n = sent.len();
    let parts = parts_for(workers, n);
    run_on_pieces(workers, bins, 1, parts, &|i, part| {
        bin_into(&sent[piece(n, parts, i)], part);
    });
}

/// Sorts `sent` into `nbins` bins, `bin_into(part_senders, part_bins)`
/// giving the bins of a part of the senders: afterwards `b.order` is the
/// senders bin by bin, each bin in the order of `sent`, and `b.starts`
/// the first message of each bin (plus the end). The bins of the first
/// `binned` senders are already in `b.bins` ([`bin_senders`]: a build
/// that sent them to other processes first).
pub(super) fn counting_sort(
    sent: &[u32],
    nbins: usize,
    bin_into: &(dyn Fn(&[u32], &mut [u32]) + Sync),
    binned: usize,
    b: &mut SortBuffers,
    workers: &dyn Workers,
) -> op2_core::Result<()> {
    let n = sent.len();
    // One histogram row per part: parts stay few when bins outnumber messages.
    let parts = parts_for(workers, n).min((4 * n + PARALLEL_MIN) / nbins.max(1)).max(1);
    let cols = parts + 1;
    debug_assert!(binned <= n && binned <= b.bins.len());
    b.bins.truncate(binned);
    b.bins.resize(n, 0);
    bin_senders(&sent[binned..], bin_into, &mut b.bins[binned..], workers);
    b.hist.clear();
    // A grid may have billions of bins: room for a row (and a start) per
    // bin is reserved first, an error where it cannot be had, not an abort.
    reserve(&mut b.hist, nbins.saturating_mul(cols), "a message build's histogram")?;
    b.hist.resize(nbins * cols, 0);
    let (bins, hist) = (&b.bins, as_atomic(&mut b.hist));
    // Histogram: part `t` counts in column `t`, which only it touches.
    workers.run(parts, &|t| {
        for &bin in &bins[piece(n, parts, t)] {
            let c = &hist[bin as usize * cols + t];
            c.store(c.load(Relaxed) + 1, Relaxed);
        }
    });
    // Per bin: where each part's messages start inside the bin, and the total.
    let row_parts = parts_for(workers, nbins);
    run_on_pieces(workers, &mut b.hist, cols, row_parts, &|_, rows| {
        for row in rows.chunks_exact_mut(cols) {
            let mut sum = 0;
            for c in row.iter_mut() {
                (*c, sum) = (sum, sum + *c);
            }
        }
    });
    b.starts.clear();
    reserve(&mut b.starts, nbins.saturating_add(1), "a message build's bin starts")?;
    b.starts.resize(nbins + 1, 0);
    for bin in 0..nbins {
        // Set sizes fit an i32 (MAX_SET_SIZE).
        b.starts[bin + 1] = b.starts[bin] + b.hist[bin * cols + parts] as i32;
    }
    // Stable scatter: part `t` writes its messages after those of parts
    // before it in each bin, at places no other part writes.
    b.order.resize(n, 0);
    let (starts, hist, order) = (&b.starts, as_atomic(&mut b.hist), as_atomic(&mut b.order));
    workers.run(parts, &|t| {
        let r = piece(n, parts, t);
        for (&bin, &e) in bins[r.clone()].iter().zip(&sent[r]) {
            let c = &hist[bin as usize * cols + t];
            let within = c.load(Relaxed);
            c.store(within + 1, Relaxed);
            order[starts[bin as usize] as usize + within as usize].store(e, Relaxed);
        }
    });
    Ok(())
}

/// Sorts `order` (sender indices) by the senders' `ids`: within each run
/// `runs[b]..runs[b + 1]` (a bin's messages) when given, else whole.
pub(super) fn order_by_id(order: &mut [u32], runs: Option<&[i32]>, ids: &[u64], workers: &dyn Workers) {
    let key = |&e: &u32| ids[e as usize];
    let Some(runs) = runs else {
        order.sort_unstable_by_key(key);
        return;
    };
    let nbins = runs.len() - 1;
    let parts = parts_for(workers, order.len()).min(nbins.max(1));
    // Parts of whole bins: bounds at bin starts.
    let mut bounds = [0usize; MAX_PARTS + 1];
    for i in 0..parts {
        bounds[i + 1] = runs[piece(nbins, parts, i).end] as usize;
    }
    run_on_parts(workers, order, &bounds[..=parts], &|i, part| {
        let base = bounds[i];
        let bins = piece(nbins, parts, i);
        for w in runs[bins.start..=bins.end].windows(2) {
            let run = &mut part[w[0] as usize - base..w[1] as usize - base];
            if run.len() > 1 {
                run.sort_unstable_by_key(key);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use op2_core::ScopedThreads;

    /// A sequential counting sort, the reference.
    fn reference(sent: &[u32], bin: impl Fn(u32) -> u32, nbins: usize) -> (Vec<i32>, Vec<u32>) {
        let mut starts = vec![0i32; nbins + 1];
        let mut order = Vec::new();
        for b in 0..nbins as u32 {
            order.extend(sent.iter().copied().filter(|&e| bin(e) == b));
            starts[b as usize + 1] = order.len() as i32;
        }
        (starts, order)
    }

    #[test]
    fn parallel_counting_sort_is_the_sequential_one_on_any_thread_count() {
        let bin = |e: u32| (e.wrapping_mul(2_654_435_761) >> 7) % 1000;
        let sent: Vec<u32> = (0..100_000u32).filter(|e| e % 7 != 3).collect();
        let want = reference(&sent, bin, 1000);
        for threads in [1, 2, 3, 8] {
            let mut b = SortBuffers::default();
            // Twice: the second build reuses the buffers.
            for _ in 0..2 {
                counting_sort(
                    &sent,
                    1000,
                    &|s, out| s.iter().zip(out).for_each(|(&e, o)| *o = bin(e)),
                    0,
                    &mut b,
                    &ScopedThreads::new(threads),
                )
                .unwrap();
                assert_eq!((&b.starts, &b.order), (&want.0, &want.1), "{threads} threads");
            }
            // The first senders binned beforehand (as a build that sent
            // them away first does): the same sort.
            let bin_into = |s: &[u32], out: &mut [u32]| s.iter().zip(out).for_each(|(&e, o)| *o = bin(e));
            let w = ScopedThreads::new(threads);
            let early = sent.len() / 3;
            let mut b = SortBuffers {
                bins: vec![u32::MAX; early],
                ..SortBuffers::default()
            };
            bin_senders(&sent[..early], &bin_into, &mut b.bins, &w);
            // Only the senders after them are binned now.
            let later = |s: &[u32], out: &mut [u32]| {
                assert!(s.iter().all(|&e| e >= sent[early]), "binned twice");
                bin_into(s, out)
            };
            counting_sort(&sent, 1000, &later, early, &mut b, &w).unwrap();
            assert_eq!(
                (&b.starts, &b.order),
                (&want.0, &want.1),
                "{threads} threads, {early} binned first"
            );
        }
    }

    #[test]
    fn selected_senders_and_id_order_do_not_depend_on_threads() {
        let flags: Vec<i32> = (0..50_000).map(|e| i32::from(e % 3 == 0)).collect();
        let ids: Vec<u64> = (0..50_000u64).map(|e| (e * 7919) % 50_021).collect();
        let mut want = (Vec::new(), Vec::new());
        for threads in [1, 2, 5] {
            let w = ScopedThreads::new(threads);
            let mut sent = Vec::new();
            select_senders(50_000, Some(&flags), &mut sent, &w);
            let runs: Vec<i32> = (0..=100).map(|b| (b * sent.len() / 100) as i32).collect();
            let mut order = sent.clone();
            order_by_id(&mut order, Some(&runs), &ids, &w);
            if threads == 1 {
                assert_eq!(sent, (0..50_000).step_by(3).collect::<Vec<u32>>());
                for r in runs.windows(2) {
                    let run = &order[r[0] as usize..r[1] as usize];
                    assert!(run.windows(2).all(|p| ids[p[0] as usize] < ids[p[1] as usize]));
                }
                want = (sent, order);
            } else {
                assert_eq!((sent, order), want, "{threads} threads");
            }
        }
    }
}
