//! The halo loop: one loop on a distributed set (docs/ARCHITECTURE.md,
//! Distributed runs). Start the halo exchanges it needs, compute the core
//! elements, wait, compute the other owned elements and, when the loop writes
//! through a map, the exec halo (whose Global contributions are dropped: other
//! ranks own them); reduce Globals across ranks; mark the halos of written
//! Dats stale. A loop over a subset of the owned elements (one that writes
//! through no map: the runtime refuses the others) waits for its exchanges,
//! then runs over the subset at once.
//!
//! With a device backend, a Dat whose current values are on the device is
//! exchanged there (`op2_core::device_halo`): its exports are packed into
//! records by one launch, only the records cross to the host and to the
//! other ranks, and the received ones are unpacked into the halo by one
//! launch; the device copy stays the valid one. Otherwise (host backends,
//! or a Dat the host wrote last) exchanges go through host memory, and a
//! device copy is marked stale once the halo has arrived.
//!
//! A Dat's halo state and the [`Distribution`] trait are in `op2-core`
//! (`halo.rs`); their MPI implementation in `op2-mpi` (`halo_exchange.rs`).

use std::sync::Arc;

use op2_core::device_halo::{self, DeviceHalo};
use op2_core::{
    Access, ArgData, ArgSpec, DatHandle, Distribution, Executor, KernelInfo, LoopBody, ParLoop, PendingExchange,
    PlanCache, Result, Set, Subset,
};

/// A Dat's halo exchange in flight: through the host, or packed on the
/// device.
enum Exchange {
    Host(Box<dyn PendingExchange>),
    Device(DeviceHalo),
}

impl Exchange {
    /// Waits for it and stores the halo where the Dat's valid copy is;
    /// the halo is fresh afterwards.
    fn finish(self, d: &dyn DatHandle, exec: &dyn Executor) -> Result<()> {
        match (self, exec.device_work()) {
            (Exchange::Device(h), Some(work)) => h.finish(d, work)?,
            (Exchange::Device(_), None) => unreachable!("started on the executor's device"),
            (Exchange::Host(p), _) => {
                if exec.is_device() {
                    // The halo arrives on the host, and the host copy becomes
                    // the valid one. A loop overlapped with the exchange may
                    // have written the device copy since: bring that down
                    // first, or it would overwrite the halo just received.
                    op2_core::sync_to_host(ArgData::Dat(d), true)?;
                }
                p.wait()?;
            }
        }
        d.halo().mark_fresh();
        Ok(())
    }
}

/// Whether a distributed loop overlaps halo exchanges with the core elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Overlap(pub bool);

/// Whether a device backend exchanges halos of device-resident Dats in
/// device memory, and whether their records go to MPI there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceHalos {
    pub on: bool,
    pub mpi_buffers: device_halo::MpiDeviceBuffers,
}

/// # Safety
/// As [`Executor::execute`]: the loop was validated and the caller holds its
/// data's borrows until this returns.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run(
    exec: &dyn Executor,
    dist: &Arc<dyn Distribution>,
    kernel: &'static KernelInfo,
    set: &Set,
    subset: Option<&Subset>,
    args: &[ArgSpec<'_>],
    plans: &PlanCache,
    body: &LoopBody<'_>,
    overlap: Overlap,
    device_halos: DeviceHalos,
    wide_vectors: bool,
) -> Result<op2_core::HaloTraffic> {
    let mut traffic = op2_core::HaloTraffic::default();
    let regions = set.regions();
    let writes_through_maps = args.iter().any(|a| a.is_indirect() && a.access.writes());

    // Exchanges: Dats whose halo values this loop reads (through a map, or
    // directly on exec-halo elements), if stale. INC starts from zero and
    // WRITE never reads, so neither needs its halo.
    let mut pending: Vec<(&dyn op2_core::DatHandle, Exchange)> = Vec::new();
    let work = exec.device_work().filter(|_| device_halos.on);
    for (k, a) in args.iter().enumerate() {
        let ArgData::Dat(d) = a.data else { continue };
        if args[..k].iter().any(|b| b.data.id() == a.data.id()) {
            continue;
        }
        let reads_halo = args
            .iter()
            .filter(|b| b.data.id() == a.data.id())
            .any(|b| !matches!(b.access, Access::Inc | Access::Write) && (b.is_indirect() || writes_through_maps));
        if reads_halo && d.halo().is_stale() {
            if let Some(owner) = d.set().distribution() {
                let r = d.set().regions();
                traffic.bytes += ((r.exec_halo + r.nonexec_halo) * d.dim() * d.scalar().size()) as u64;
                let t = std::time::Instant::now();
                let on_device = match work {
                    Some(w) => device_halo::start(d, owner.as_ref(), w, device_halos.mpi_buffers)?,
                    None => None,
                };
                let p = match on_device {
                    Some(h) => Exchange::Device(h),
                    None => {
                        if exec.is_device() {
                            op2_core::sync_to_host(ArgData::Dat(d), false)?;
                        }
                        Exchange::Host(owner.start_exchange(d)?)
                    }
                };
                traffic.seconds += t.elapsed().as_secs_f64();
                tracing::debug!(
                    loop_name = kernel.name,
                    dat = d.name(),
                    halo_elements = r.exec_halo + r.nonexec_halo,
                    overlapped = overlap.0,
                    "halo exchange started"
                );
                // A subset has no core part to overlap with.
                if overlap.0 && subset.is_none() {
                    pending.push((d, p));
                } else {
                    let t = std::time::Instant::now();
                    p.finish(d, exec)?;
                    traffic.seconds += t.elapsed().as_secs_f64();
                }
            }
        }
    }

    // A device loop leaves a reduction's value on the device; the ranks
    // combine values on the host, which then holds the newer copy.
    let on_host = |g: &dyn op2_core::GlobalHandle| match exec.is_device() {
        true => op2_core::sync_to_host(ArgData::Global(g), true),
        false => Ok(()),
    };
    let mut reductions: Vec<(usize, Vec<u8>)> = Vec::new();
    for (k, a) in args.iter().enumerate() {
        // A Global given twice (`g(INC), g(INC)`) is reduced across the
        // ranks once: a second pass would add every rank's total again.
        if args[..k].iter().any(|b| b.data.id() == a.data.id()) {
            continue;
        }
        if let (ArgData::Global(g), true) = (a.data, a.access.is_reduction()) {
            on_host(g)?;
            reductions.push((k, g.begin_distributed_reduction(a.access)));
        }
    }

    let run = |subset: Option<&Subset>, range: std::ops::Range<usize>| -> Result<()> {
        if range.is_empty() {
            return Ok(());
        }
        let lp = ParLoop {
            kernel,
            set,
            subset,
            range,
            args,
            plans,
            wide_vectors,
        };
        // SAFETY: this function's contract: validated, borrows held.
        unsafe { exec.execute(&lp, body) }
    };
    if let Some(s) = subset {
        // Owned elements only (a subset's are below the set's size), and
        // no exec halo: the loop writes through no map.
        let ran = run(Some(s), 0..s.len());
        agreed_or_restored(dist, exec, args, &reductions, ran)?;
        return finish(dist, exec, args, &reductions, traffic);
    }
    let run = |range: std::ops::Range<usize>| run(None, range);
    let ran = (|| -> Result<()> {
        run(0..regions.core)?;
        let t = std::time::Instant::now();
        for (d, p) in pending {
            p.finish(d, exec)?;
        }
        traffic.seconds += t.elapsed().as_secs_f64();
        run(regions.core..regions.owned_size())?;
        if writes_through_maps && regions.exec_halo > 0 {
            let mut globals: Vec<(&dyn op2_core::GlobalHandle, Vec<u8>)> = Vec::new();
            for (k, _) in &reductions {
                if let ArgData::Global(g) = args[*k].data {
                    on_host(g)?;
                    // SAFETY: the runtime holds the Global's borrow.
                    let bytes = unsafe { std::slice::from_raw_parts(g.host_bytes(), g.byte_len()) }.to_vec();
                    globals.push((g, bytes));
                }
            }
            run(regions.owned_size()..regions.owned_size() + regions.exec_halo)?;
            for (g, bytes) in globals {
                on_host(g)?;
                g.restore(&bytes);
            }
        }
        Ok(())
    })();
    agreed_or_restored(dist, exec, args, &reductions, ran)?;
    finish(dist, exec, args, &reductions, traffic)
}

/// Where the loop failed on any rank after its Globals' reductions began
/// (a checked kernel's failure on one rank's elements, say): every rank
/// puts its Globals back as they were before the loop and returns an
/// error, the failing ones their own, instead of the others waiting in the
/// reduction for ever. Only a loop with reductions pays the agreement: one
/// all-reduce of an int.
fn agreed_or_restored(
    dist: &Arc<dyn Distribution>,
    exec: &dyn Executor,
    args: &[ArgSpec<'_>],
    reductions: &[(usize, Vec<u8>)],
    ran: Result<()>,
) -> Result<()> {
    if reductions.is_empty() {
        return ran;
    }
    let mut failed = i32::from(ran.is_err()).to_ne_bytes();
    dist.all_reduce(&mut failed, op2_core::ScalarType::I32, Access::Max)?;
    if i32::from_ne_bytes(failed) == 0 {
        return ran;
    }
    for (k, saved) in reductions {
        if let ArgData::Global(g) = args[*k].data {
            if exec.is_device() {
                op2_core::sync_to_host(ArgData::Global(g), true)?;
            }
            g.restore(saved);
        }
    }
    Err(ran.err().unwrap_or_else(|| op2_core::Error::Mpi {
        reason: "the loop failed on another rank: its Globals are as they were before it".to_string(),
    }))
}

/// Reduces the loop's Globals across the ranks (`reductions`: each one's
/// argument and saved value) and marks the halos of the Dats it wrote
/// stale.
fn finish(
    dist: &Arc<dyn Distribution>,
    exec: &dyn Executor,
    args: &[ArgSpec<'_>],
    reductions: &[(usize, Vec<u8>)],
    traffic: op2_core::HaloTraffic,
) -> Result<op2_core::HaloTraffic> {
    for (k, saved) in reductions {
        let a = &args[*k];
        if let ArgData::Global(g) = a.data {
            if exec.is_device() {
                op2_core::sync_to_host(ArgData::Global(g), true)?;
            }
            g.end_distributed_reduction(a.access, saved, &mut |bytes| {
                dist.all_reduce(bytes, g.scalar(), a.access)
            })?;
        }
    }
    for a in args.iter().filter(|a| a.access.writes()) {
        if let ArgData::Dat(d) = a.data {
            d.halo().mark_stale();
        }
    }
    Ok(traffic)
}
