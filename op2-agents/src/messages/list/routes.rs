//! Senders routed by where they are: a value per bin of a spatial grid
//! ([`BinTable`], e.g. the rank that owns the bin, or whether another rank
//! reads it) looked up at each sender's position, and the senders whose
//! value is not 0 listed with it ([`Routes`]), ascending. On a device the
//! lookup and the selection run there and only the routed senders come
//! back, so a distributed run finds the agents that leave, and the
//! messages its neighbours read, without bringing the positions to the
//! host.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{MessageList, Search};
use crate::SpatialGrid;
use op2_core::agent_support::DevicePacker;
use op2_core::agent_support::{stage, READ};
use op2_core::{
    scratch_buffer, AgentPack, ArgData, BinJob, Dat, DeviceBuffer, DeviceWork, GatherJob, LookupJob, Result, SelectJob,
    Workers,
};

/// Tables made so far: each gets its own number, so a device copy is
/// known by it.
static TABLES: AtomicU64 = AtomicU64::new(1);

/// A value per bin of a spatial grid, to route senders by their bins
/// ([`MessageList::route_senders_on`]); 0 routes nowhere. Values are
/// meant to be positive: routes give `-1` for a sender in no bin.
#[derive(Debug)]
pub struct BinTable {
    values: Vec<i32>,
    /// This table's number (its device copies are cached by it).
    number: u64,
}

impl BinTable {
    /// The table of `values`, one per bin.
    pub fn new(values: Vec<i32>) -> BinTable {
        BinTable {
            values,
            number: TABLES.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The values, by bin.
    pub fn values(&self) -> &[i32] {
        &self.values
    }
}

/// Senders routed by a [`BinTable`]: those whose bin's value is not 0, in
/// ascending index order, each with its value (`-1` for a position in no
/// bin of the grid).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Routes {
    senders: Vec<u32>,
    values: Vec<i32>,
}

impl Routes {
    /// The routed senders' indices, ascending.
    pub fn senders(&self) -> &[u32] {
        &self.senders
    }

    /// Each routed sender's value (as [`Routes::senders`] orders them).
    pub fn values(&self) -> &[i32] {
        &self.values
    }

    /// How many senders are routed.
    pub fn len(&self) -> usize {
        self.senders.len()
    }

    /// Whether no sender is routed.
    pub fn is_empty(&self) -> bool {
        self.senders.is_empty()
    }

    /// Every sender of `senders` (ascending), each with `value`.
    pub(super) fn fill_all(&mut self, senders: &[u32], value: i32) {
        self.senders.clear();
        self.senders.extend_from_slice(senders);
        self.values.clear();
        self.values.resize(senders.len(), value);
    }

    /// The routes of the senders `sent` (ascending; `None`: every sender)
    /// whose bins are `bins` (as `sent`).
    pub(super) fn fill_from_bins(&mut self, sent: Option<&[u32]>, bins: &[u32], table: &BinTable) {
        self.senders.clear();
        self.values.clear();
        for (k, &b) in bins.iter().enumerate() {
            let v = table.values.get(b as usize).copied().unwrap_or(-1);
            if v != 0 {
                self.senders.push(sent.map_or(k as u32, |s| s[k]));
                self.values.push(v);
            }
        }
    }
}

/// Device buffers for routing and packing, kept from exchange to exchange.
#[derive(Default)]
pub(super) struct RouteScratch {
    /// Tables on the device: (table number, context, buffer); the few in
    /// use (a domain's ownership and readers tables).
    tables: Vec<(u64, u64, Box<dyn DeviceBuffer>)>,
    params: Option<Box<dyn DeviceBuffer>>,
    values: Option<Box<dyn DeviceBuffer>>,
    selected: Option<Box<dyn DeviceBuffer>>,
    routed_values: Option<Box<dyn DeviceBuffer>>,
    /// Bin offsets of a count on the device.
    starts: Option<Box<dyn DeviceBuffer>>,
    pub(super) packer: DevicePacker,
    bins: Vec<u32>,
}

/// Tables kept on a device per list.
const TABLES_KEPT: usize = 4;

impl MessageList {
    /// Routes the senders by `table` over the bins of `grid` (`None`: the
    /// list's own grid) at their positions now, into `out`. On a device
    /// runtime the lookup runs where the positions are, and only the
    /// routed senders and their values come back.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`](op2_core::Error::InvalidMessages) if the list
    /// is not spatial, `grid` has another number of dimensions, or the
    /// table has another number of bins; [`Error::HostBorrow`](op2_core::Error::HostBorrow)
    /// if the positions are borrowed for writing; the device's.
    pub fn route_senders_on(
        &self,
        grid: Option<&SpatialGrid>,
        table: &BinTable,
        out: &mut Routes,
        workers: &dyn Workers,
    ) -> Result<()> {
        let mut scratch = self.0.routing.lock().unwrap_or_else(|e| e.into_inner());
        match workers.device_work() {
            Some(work) => self.route_on_device(work, grid, None, table, out, &mut scratch),
            None => {
                let mut bins = std::mem::take(&mut scratch.bins);
                let binned = match grid {
                    Some(g) => self.sender_bins_in(g, &mut bins),
                    None => self.sender_bins(&mut bins),
                };
                let checked = binned.and_then(|()| self.check_table(grid, table));
                if checked.is_ok() {
                    out.fill_from_bins(None, &bins, table);
                }
                scratch.bins = bins;
                checked
            }
        }
    }

    /// Adds the number of senders in each bin of `grid` (of as many
    /// dimensions as the positions) to `counts` (one per bin), e.g. to cut
    /// a domain among processes by the agents per bin. On a device runtime
    /// the senders are counted there and only the counts come back.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`](op2_core::Error::InvalidMessages) if the list
    /// is not spatial, `grid` has another number of dimensions, or `counts`
    /// not one entry per bin of it; as [`MessageList::route_senders_on`].
    pub fn count_senders_in_on(&self, grid: &SpatialGrid, counts: &mut [u64], workers: &dyn Workers) -> Result<()> {
        if counts.len() != grid.bin_count() {
            return Err(self.invalid(format!(
                "{} counts for the {} bins of the grid",
                counts.len(),
                grid.bin_count()
            )));
        }
        let mut scratch = self.0.routing.lock().unwrap_or_else(|e| e.into_inner());
        let Some(work) = workers.device_work() else {
            let mut bins = std::mem::take(&mut scratch.bins);
            let binned = self.sender_bins_in(grid, &mut bins);
            if binned.is_ok() {
                for &b in &bins {
                    counts[b as usize] += 1;
                }
            }
            scratch.bins = bins;
            return binned;
        };
        let Search::Spatial(b) = &self.0.search else {
            return Err(self.invalid("a brute-force list has no bins".to_string()));
        };
        if grid.dims() != b.grid.dims() {
            return Err(self.invalid(format!(
                "its positions have {} coordinates, and the grid asked for bins {}",
                b.grid.dims(),
                grid.dims()
            )));
        }
        let (n, nbins) = (self.0.senders.total_size(), grid.bin_count());
        let s = &mut *scratch;
        let params = scratch_buffer(work, &mut s.params, "grid", 8 * crate::GRID_PARAMS)?;
        params.upload(bytemuck::cast_slice(&grid.params()))?;
        let starts = scratch_buffer(work, &mut s.starts, "bin starts", 4 * (nbins + 1))?;
        let order = scratch_buffer(work, &mut s.selected, "routed", 4 * n)?;
        {
            let positions = stage(work, b.positions.as_arg(), READ, 0)?;
            work.bin(&BinJob {
                position: b.positions.scalar(),
                dims: grid.dims(),
                senders: n,
                bins: nbins,
                flags: None,
                positions: positions.buffer(),
                grid: params,
                ids: None,
                starts,
                order,
            })?;
        }
        let mut offsets = vec![0i32; nbins + 1];
        starts.download(bytemuck::cast_slice_mut(&mut offsets))?;
        for (c, w) in counts.iter_mut().zip(offsets.windows(2)) {
            *c += (w[1] - w[0]) as u64;
        }
        Ok(())
    }

    /// Builds the list from its senders alone (as [`MessageList::build_on`])
    /// and routes them by each table of `routes` over the list's grid,
    /// into the routes beside it: on the host from the bins the build's
    /// sort used (the senders are binned once), on a device there. A
    /// distributed run finds this way, with its build, the senders whose
    /// messages other processes read, and its agents that read none of
    /// theirs. Returns the number of messages.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`](op2_core::Error::InvalidMessages) if the
    /// list holds ghosts ([`MessageList::set_ghosts`]) or a table has not
    /// one value per bin of its grid; as [`MessageList::build_on`] and
    /// [`MessageList::route_senders_on`].
    pub fn build_routing_on(&self, routes: &mut [(&BinTable, &mut Routes)], workers: &dyn Workers) -> Result<usize> {
        let g = self.ghost_count();
        if g > 0 {
            return Err(self.invalid(format!(
                "it holds {g} ghost messages, and a build that routes its senders builds from them alone: clear the ghosts first"
            )));
        }
        for (table, _) in routes.iter() {
            self.check_table(None, table)?;
        }
        let built = self.build_on(workers)?;
        let inner = &*self.0;
        let scratch = inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
        match (workers.device_work(), scratch.device.built) {
            (Some(work), Some(_)) => {
                drop(scratch);
                let mut routing = inner.routing.lock().unwrap_or_else(|e| e.into_inner());
                for (table, out) in routes.iter_mut() {
                    self.route_on_device(work, None, None, table, out, &mut routing)?;
                }
            }
            _ => {
                // Every sender sent: the sort binned them in index order.
                let n = inner.senders.total_size();
                for (table, out) in routes.iter_mut() {
                    out.fill_from_bins(None, &scratch.sort.bins[..n], table);
                }
            }
        }
        Ok(built)
    }

    /// Refuses a table that has not one value per bin of `grid` (or the
    /// list's grid).
    pub(super) fn check_table(&self, grid: Option<&SpatialGrid>, table: &BinTable) -> Result<()> {
        let bins = match (&self.0.search, grid) {
            (_, Some(g)) => g.bin_count(),
            (Search::Spatial(b), None) => b.grid.bin_count(),
            (Search::BruteForce, None) => return Err(self.invalid("a brute-force list has no bins".to_string())),
        };
        if table.values.len() == bins {
            return Ok(());
        }
        Err(self.invalid(format!(
            "a table of {} values routes senders over {bins} bins",
            table.values.len()
        )))
    }

    /// [`MessageList::route_senders_on`] on `work`'s device, of the
    /// senders whose `sent` flag is not 0 (`None`: every sender).
    pub(super) fn route_on_device(
        &self,
        work: &dyn DeviceWork,
        grid: Option<&SpatialGrid>,
        sent: Option<&Dat<i32>>,
        table: &BinTable,
        out: &mut Routes,
        s: &mut RouteScratch,
    ) -> Result<()> {
        let Search::Spatial(b) = &self.0.search else {
            return Err(self.invalid("a brute-force list has no bins".to_string()));
        };
        let grid = grid.unwrap_or(&b.grid);
        if grid.dims() != b.grid.dims() {
            return Err(self.invalid(format!(
                "its positions have {} coordinates, and the grid asked for bins {}",
                b.grid.dims(),
                grid.dims()
            )));
        }
        self.check_table(Some(grid), table)?;
        let n = self.0.senders.total_size();
        let ctx = work.context_id();
        if !s.tables.iter().any(|t| (t.0, t.1) == (table.number, ctx)) {
            let buffer = work.new_buffer("bin table", (4 * table.values.len()).max(8))?;
            buffer.upload(bytemuck::cast_slice(&table.values))?;
            if s.tables.len() == TABLES_KEPT {
                s.tables.remove(0);
            }
            s.tables.push((table.number, ctx, buffer));
        }
        let Some((_, _, table_buffer)) = s.tables.iter().find(|t| (t.0, t.1) == (table.number, ctx)) else {
            unreachable!("uploaded above")
        };
        let params = scratch_buffer(work, &mut s.params, "grid", 8 * crate::GRID_PARAMS)?;
        params.upload(bytemuck::cast_slice(&grid.params()))?;
        let values = scratch_buffer(work, &mut s.values, "routes", 4 * n)?;
        let selected = scratch_buffer(work, &mut s.selected, "routed", 4 * n)?;
        let routed_values = scratch_buffer(work, &mut s.routed_values, "routed values", 4 * n)?;
        let m = {
            let positions = stage(work, b.positions.as_arg(), READ, 0)?;
            work.lookup(&LookupJob {
                position: b.positions.scalar(),
                dims: grid.dims(),
                senders: n,
                bins: grid.bin_count(),
                positions: positions.buffer(),
                grid: params,
                table: &**table_buffer,
                out: values,
            })?;
            if let Some(sent) = sent {
                // The senders that did not send route nowhere.
                let flags = stage(work, ArgData::Dat(sent), READ, 0)?;
                let unsent = work.select(&SelectJob {
                    n,
                    flags: Some(flags.buffer()),
                    mask: -1,
                    when_set: false,
                    out: selected,
                })?;
                work.mark(values, n, selected, unsent, 0)?;
            }
            work.select(&SelectJob {
                n,
                flags: Some(values),
                mask: -1,
                when_set: true,
                out: selected,
            })?
        };
        work.gather(&GatherJob {
            n: m,
            words: 1,
            order: selected,
            src: values,
            dst: routed_values,
            dst_first: 0,
            tail: None,
        })?;
        out.senders.resize(m, 0);
        out.values.resize(m, 0);
        selected.download(bytemuck::cast_slice_mut(&mut out.senders))?;
        routed_values.download(bytemuck::cast_slice_mut(&mut out.values))?;
        Ok(())
    }

    /// As [`MessageList::pack_messages`], for a runtime's work (`&rt`): on
    /// a device runtime, a carried Dat whose valid copy is on the device
    /// only has the packed senders' elements gathered there and brought
    /// back, not the whole Dat.
    ///
    /// # Errors
    /// As [`MessageList::pack_messages`]; the device's.
    pub fn pack_messages_on(&self, senders: &[u32], pack: &mut AgentPack, workers: &dyn Workers) -> Result<()> {
        let mut scratch = self.0.routing.lock().unwrap_or_else(|e| e.into_inner());
        self.pack_with(senders, pack, workers.device_work(), &mut scratch.packer)
    }
}
