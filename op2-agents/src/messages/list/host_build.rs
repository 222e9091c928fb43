//! A build on the host's threads: the sent senders selected, binned and
//! sorted by id within bins (a spatial list), ghosts merged, then every
//! carried Dat gathered in message order.

use super::*;

impl MessageList {
    /// The senders' ids, in index order, into `out`.
    ///
    /// # Errors
    /// As [`op2_core::Set::try_global_ids`].
    pub(super) fn sender_ids(&self, out: &mut Vec<u64>) -> Result<()> {
        let inner = &*self.0;
        out.clear();
        match (inner.senders.population(), &inner.fixed_ids) {
            (Some(p), _) => p.with_ids(|ids, _| out.extend_from_slice(ids))?,
            (None, Some(ids)) => out.extend_from_slice(ids),
            (None, None) => out.extend(0..inner.senders.total_size() as u64),
        }
        Ok(())
    }

    pub(super) fn build_untimed(
        &self,
        sent: Option<&Dat<i32>>,
        exchange: Option<&mut dyn GhostExchange>,
        workers: &dyn Workers,
    ) -> Result<(usize, f64)> {
        let inner = &*self.0;
        let mut guard = inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *guard;
        s.built_at = None;
        s.device.built = None;
        s.ghosts_built = 0;
        // Senders binned (and their ids gathered) before the ghosts came.
        let (binned, exchanging, ids_gathered) = match exchange {
            Some(x) => {
                let (binned, exchanging) = self.exchange_ghosts(x, sent, s, workers)?;
                (binned, exchanging, true)
            }
            None => (0, 0.0, false),
        };
        let carried = inner.carried.lock().unwrap_or_else(|e| e.into_inner());
        s.carried_built = carried.len();
        let ghosts = self.ghosts();
        let g = ghosts.len();
        let n = inner.senders.total_size();
        // Ghosts' fields: the layout the ghosts were packed for must be the
        // carried Dats' still.
        let offsets = match g {
            0 => Vec::new(),
            _ => {
                let (offsets, layout) = self.layout_of(&carried)?;
                if ghosts.layout_fingerprint() != layout.fingerprint() {
                    return Err(self.invalid(format!(
                        "its {g} ghost messages were packed for other Dats than its messages' {} (a Dat was carried since)",
                        layout.describe()
                    )));
                }
                offsets
            }
        };
        // A spatial list carries its positions from the start.
        let positions_carried = match &inner.search {
            Search::Spatial(b) => carried.iter().position(|c| c.source_id() == b.positions.source_id()),
            Search::BruteForce => None,
        };
        // On a device (a brute-force list with ghosts, rare, on the host).
        let spatial = matches!(inner.search, Search::Spatial(_));
        if let Some(work) = workers.device_work().filter(|_| g == 0 || spatial) {
            drop(carried);
            let records = if g > 0 {
                if !ids_gathered {
                    self.sender_ids(&mut s.ids)?;
                }
                self.check_ghost_ids(&s.ids[..n], &ghosts)?;
                Some(on_device::GhostRecords {
                    pack: &ghosts,
                    offsets: &offsets,
                    positions: positions_carried,
                })
            } else {
                None
            };
            let built = self.build_on_device(work, sent, records, s, workers)?;
            return Ok((built, exchanging));
        }
        let field = |offset: usize| GhostField {
            bytes: ghosts.as_bytes(),
            record: ghosts.record_bytes(),
            offset,
            first: n as u32,
        };
        if let Some(p) = inner.set.population() {
            // One slot per sender (births and deaths changed their number)
            // and per ghost.
            p.resize(inner.set.name(), n + g)?;
        }
        // The senders that send, in index order, then the ghosts.
        let flags = sent.map(Dat::try_data_ro).transpose()?;
        select_senders(n, flags.as_deref(), &mut s.sent, workers);
        drop(flags);
        s.sent.extend(n as u32..(n + g) as u32);
        if let Search::Spatial(b) = &inner.search {
            let nbins = b.grid.bin_count();
            let ghost_positions = positions_carried.filter(|_| g > 0).map(|c| field(offsets[c]));
            b.positions.sort(
                &b.grid.params(),
                nbins,
                &s.sent,
                ghost_positions,
                binned,
                &mut s.sort,
                workers,
            )?;
        }
        // Canonical order: by id within each bin (or overall), whatever the
        // senders' order in memory or their process.
        let (order, runs) = match &inner.search {
            Search::BruteForce => (&mut s.sent, None),
            Search::Spatial(_) => (&mut s.sort.order, Some(&s.sort.starts[..])),
        };
        if g > 0 {
            if !ids_gathered {
                self.sender_ids(&mut s.ids)?;
            }
            s.ids.truncate(n);
            s.ids.extend(ghosts.ids());
            order_by_id(order, runs, &s.ids, workers);
            let whole = [0, order.len() as i32];
            for w in runs.unwrap_or(&whole).windows(2) {
                let run = &order[w[0] as usize..w[1] as usize];
                if let Some(p) = run.windows(2).find(|p| s.ids[p[0] as usize] == s.ids[p[1] as usize]) {
                    return Err(self.invalid(format!(
                        "two of its messages come from sender id {} (a ghost's id is a sender's, or two ghosts')",
                        s.ids[p[0] as usize]
                    )));
                }
            }
        } else {
            match (inner.senders.population(), &inner.fixed_ids) {
                (Some(p), _) => p.with_ids(|ids, ascending| {
                    if !ascending {
                        order_by_id(order, runs, ids, workers)
                    }
                })?,
                (None, Some(ids)) => order_by_id(order, runs, ids, workers),
                (None, None) => {}
            }
        }
        let order = &*order;
        for (c, &offset) in carried.iter().zip(offsets.iter().chain(std::iter::repeat(&0))) {
            c.gather(order, (g > 0).then(|| field(offset)), workers)?;
        }
        if let Search::Spatial(b) = &inner.search {
            b.starts.try_data_mut()?.copy_from_slice(&s.sort.starts);
            b.starts_count.record_build(s.sort.starts.len(), b.starts.set());
        }
        inner.count.record_build(s.sent.len(), &inner.set);
        s.built_at = Some(inner.senders.generation());
        s.ghosts_built = g;
        Ok((s.sent.len(), exchanging))
    }
}
