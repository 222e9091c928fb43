//! Sorting the senders by bin (FLAME GPU's agent sorting): every Dat of
//! the senders' set permuted at once, so that agents near each other in
//! space are near each other in memory.

use super::*;

impl MessageList {
    /// Sorts the senders in memory into the list's order (for a spatial
    /// list: by bin), every Dat on their set at once, so that agents near
    /// each other in space are near each other in memory: a loop over them
    /// then reads each bin's messages while they are still in cache
    /// (FLAME GPU's agent sorting). Senders that sent nothing follow, in
    /// their order. Ids move with their agents, and since messages are
    /// ordered by sender id within each bin, results are bitwise the same
    /// with or without sorting. The list stays valid; it needs a build
    /// before the next sort.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if the senders are not dynamic
    /// ([`Set::dynamic`]), the list has not been built, or the senders
    /// changed since its last build; as [`Set::permute`].
    pub fn sort_senders(&self) -> Result<()> {
        self.sort_senders_on(&ScopedThreads::available())
    }

    /// As [`MessageList::sort_senders`], on `workers` (as
    /// [`MessageList::build_on`]), timed in the workers' timings (as `sort
    /// NAME`). After a build on a device the sort stays there: the order
    /// is made there and the agents and their ids move there. The host
    /// waits for nothing (once the ids and the Dats are on the device)
    /// unless some senders sent no message or the list holds ghosts: then
    /// it reads two counts.
    ///
    /// # Errors
    /// As [`MessageList::sort_senders`].
    pub fn sort_senders_on(&self, workers: &dyn Workers) -> Result<()> {
        let start = std::time::Instant::now();
        let device_before = op2_core::device_counts::this_thread();
        self.sort_untimed(workers)?;
        if let Some(t) = workers.work_timings() {
            let device = op2_core::device_counts::this_thread().since(device_before);
            let name = format!("sort {}", self.0.name);
            let seconds = start.elapsed().as_secs_f64();
            t.record_loop(&name, seconds, 0, op2_core::HaloTraffic::default(), device);
        }
        Ok(())
    }

    fn sort_untimed(&self, workers: &dyn Workers) -> Result<()> {
        let inner = &*self.0;
        let bad = |reason: &str| Error::InvalidMessages {
            list: inner.name.clone(),
            reason: reason.to_string(),
        };
        if !inner.senders.is_dynamic() {
            return Err(bad(&format!(
                "sorting the senders needs a dynamic set (`Set::dynamic`), and `{}` is fixed",
                inner.senders.name()
            )));
        }
        let mut guard = inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *guard;
        match s.built_at {
            None => return Err(bad("sorting the senders needs a build first (and one after each sort)")),
            Some(g) if g != inner.senders.generation() => {
                return Err(bad(
                    "the senders changed since the last build: build the list again first",
                ))
            }
            Some(_) => {}
        }
        let n = inner.senders.total_size();
        // A build on a device left its order there: the permutation is made
        // there, and the agents and their ids move there.
        if let (Some(work), Some(p)) = (workers.device_work(), inner.senders.population()) {
            let ghosts = s.ghosts_built;
            if let Some(order) = s.device.sort_order(work, n, ghosts, &|r| bad(&r))? {
                p.permute_by_device_order(inner.senders.name(), order, work)?;
                s.built_at = None;
                return Ok(());
            }
        }
        let listed = match &inner.search {
            Search::BruteForce => &mut s.sent,
            Search::Spatial(_) => &mut s.sort.order,
        };
        s.device.order_to_host(listed)?;
        let listed = &*listed;
        s.permutation.clear();
        // Ghosts (indices past the senders) stay where they are.
        s.permutation.extend(listed.iter().filter(|&&e| (e as usize) < n));
        if s.permutation.len() < n {
            s.listed.clear();
            s.listed.resize(n, false);
            for &e in &s.permutation {
                s.listed[e as usize] = true;
            }
            s.permutation.extend((0..n as u32).filter(|&e| !s.listed[e as usize]));
        }
        inner.senders.permute_on(&s.permutation, workers)?;
        s.built_at = None;
        Ok(())
    }
}
