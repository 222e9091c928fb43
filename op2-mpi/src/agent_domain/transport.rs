//! The domain's transport: the communicator and this rank's place in it
//! (`Ranks`), the per-rank packs kept from exchange to exchange (`Lanes`),
//! the neighbours an exchange talks to (`Peers`), and the collective swaps
//! and agreements every exchange is made of.

use super::*;

/// Per other rank: the indices going there, and the packs sent and
/// received (kept from exchange to exchange: they only grow); and the
/// ranks this rank's exchanges go to and come from under the current cut.
pub(super) struct Lanes {
    pub(super) indices: Vec<Vec<u32>>,
    pub(super) send: Vec<AgentPack>,
    pub(super) recv: Vec<AgentPack>,
    pub(super) peers: Peers,
}

impl Lanes {
    pub(super) fn new(ranks: usize) -> Lanes {
        Lanes {
            indices: vec![Vec::new(); ranks],
            send: vec![AgentPack::default(); ranks],
            recv: vec![AgentPack::default(); ranks],
            peers: Peers::default(),
        }
    }
}

/// The ranks an exchange sends to and receives from (ascending), found
/// once per cut: only they swap headers, so an exchange costs messages
/// per neighbour, not per rank.
#[derive(Clone, Default)]
pub(super) struct Peers {
    pub(super) send: Vec<u32>,
    pub(super) recv: Vec<u32>,
}

/// The communicator and this rank's place in it.
pub(super) struct Ranks {
    pub(super) comm: SimpleCommunicator,
    pub(super) rank: usize,
    pub(super) size: usize,
}

impl Ranks {
    /// Sends every rank its pack of `lanes` (sizes and layout fingerprints
    /// first, then the payloads that are not empty) and receives theirs;
    /// returns the records and bytes sent and the seconds waited for the
    /// payloads after `meanwhile`, and counts the receive buffers that grew
    /// into `growths`. The headers go to and come from the lanes' peers
    /// alone if `among_peers` (every rank's packs for ranks other than its
    /// peers are then empty), else all to all.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn swap(
        &self,
        tag: i32,
        lanes: &mut Lanes,
        among_peers: bool,
        layout: &AgentLayout,
        name: &str,
        growths: &mut u64,
        meanwhile: &mut dyn FnMut(),
    ) -> Result<(u64, u64, f64)> {
        let header: Vec<u64> = lanes
            .send
            .iter()
            .flat_map(|p| [p.as_bytes().len() as u64, layout.fingerprint()])
            .collect();
        // A pack for a rank that is not a peer would never be received.
        debug_assert!(
            !among_peers
                || (lanes.send.iter().enumerate())
                    .all(|(q, p)| p.is_empty() || lanes.peers.send.binary_search(&(q as u32)).is_ok()),
            "a pack for a rank that is not a peer"
        );
        let incoming = match among_peers {
            true => self.swap_headers(tag, &header, &lanes.peers, layout),
            false => {
                let mut incoming = vec![0u64; 2 * self.size];
                crate::waiting::all_to_all_into(&self.comm, &header[..], &mut incoming[..]);
                incoming
            }
        };
        // Ranks whose Dats differ would exchange records that mean other
        // things: refused by every rank before any payload moves.
        let mismatch = incoming.chunks_exact(2).position(|h| h[1] != layout.fingerprint());
        let checked = match mismatch {
            Some(q) => Err(Error::InvalidMigration {
                set: name.to_string(),
                reason: format!(
                    "rank {q} packs other Dats than this rank's {}: every rank must make the same Dats and carry the same ones",
                    if tag == MIGRATION_TAG { "agents" } else { "messages" }
                ),
            }),
            None => Ok(()),
        };
        self.agree(checked, "comparing the ranks' Dats", name)?;
        let (comm, rank) = (&self.comm, self.rank);
        // Every receive buffer is made before any payload is posted, and
        // every rank learns whether one could not be: no request is left
        // behind by an error.
        let mut grew = 0;
        let mut sized = Ok(());
        // One message a peer each way, whose count MPI takes as an `int`
        // (rsmpi panics past it): an error on every rank instead.
        let too_large = lanes
            .send
            .iter()
            .map(|p| p.as_bytes().len())
            .chain(incoming.chunks_exact(2).map(|h| h[0] as usize));
        if let Some(bytes) = too_large.into_iter().find(|&b| b > i32::MAX as usize) {
            sized = Err(Error::Mpi {
                reason: format!(
                    "moving `{name}`: {bytes} bytes to or from one rank, more than one MPI message carries (2^31 - 1); run on more ranks"
                ),
            });
        }
        for (pack, h) in lanes.recv.iter_mut().zip(incoming.chunks_exact(2)) {
            pack.reset(layout);
            // `receive` grows the buffer only past its capacity.
            grew += u64::from(h[0] as usize > pack.capacity_bytes());
            if let Err(e) = pack.receive(name, h[0] as usize) {
                sized = sized.and(Err(e));
            }
        }
        self.agree(sized, "making room for what arrives", name)?;
        let mut waited = 0.0;
        let received = mpi::request::scope(|scope| -> Result<()> {
            let mut requests = Vec::new();
            for (q, (pack, h)) in lanes.recv.iter_mut().zip(incoming.chunks_exact(2)).enumerate() {
                // Made above: the same size again, no growth, no error.
                let buf = pack.receive(name, h[0] as usize)?;
                if q != rank && !buf.is_empty() {
                    requests.push(
                        comm.process_at_rank(q as i32)
                            .immediate_receive_into_with_tag(scope, buf, tag),
                    );
                }
            }
            for (q, pack) in lanes.send.iter().enumerate() {
                if q != rank && !pack.is_empty() {
                    requests.push(
                        comm.process_at_rank(q as i32)
                            .immediate_send_with_tag(scope, pack.as_bytes(), tag),
                    );
                }
            }
            // The payloads travel while the caller works.
            meanwhile();
            let waiting = Instant::now();
            for r in requests {
                crate::waiting::finish(r);
            }
            waited = waiting.elapsed().as_secs_f64();
            Ok(())
        });
        received?;
        *growths += grew;
        let records: u64 = lanes.send.iter().map(|p| p.len() as u64).sum();
        let bytes: u64 = lanes.send.iter().map(|p| p.as_bytes().len() as u64).sum();
        Ok((records, bytes, waited))
    }

    /// The headers of [`Ranks::swap`] sent to `peers.send` and received
    /// from `peers.recv`; the other ranks send nothing, in this layout.
    pub(super) fn swap_headers(&self, tag: i32, header: &[u64], peers: &Peers, layout: &AgentLayout) -> Vec<u64> {
        let mut incoming: Vec<u64> = (0..self.size).flat_map(|_| [0, layout.fingerprint()]).collect();
        mpi::request::scope(|scope| {
            let mut requests = Vec::new();
            for (q, h) in incoming.chunks_exact_mut(2).enumerate() {
                if peers.recv.binary_search(&(q as u32)).is_ok() {
                    requests.push(self.comm.process_at_rank(q as i32).immediate_receive_into_with_tag(
                        scope,
                        h,
                        tag + HEADER_TAG,
                    ));
                }
            }
            for &q in &peers.send {
                let h = &header[2 * q as usize..2 * q as usize + 2];
                requests.push(
                    self.comm
                        .process_at_rank(q as i32)
                        .immediate_send_with_tag(scope, h, tag + HEADER_TAG),
                );
            }
            for r in requests {
                crate::waiting::finish(r);
            }
        });
        incoming
    }

    /// The peers of a rank that sends to `send` (ascending): the ranks
    /// that send to it are learnt from all of them (once per cut).
    /// Collective.
    pub(super) fn peers(&self, send: &[u32]) -> Peers {
        let mut to = vec![0i32; self.size];
        for &q in send {
            to[q as usize] = 1;
        }
        let mut from = vec![0i32; self.size];
        crate::waiting::all_to_all_into(&self.comm, &to[..], &mut from[..]);
        Peers {
            send: send.to_vec(),
            recv: (0..self.size as u32).filter(|&q| from[q as usize] != 0).collect(),
        }
    }

    /// As [`Ranks::agree`], and whether `flag` is set on some rank (in the
    /// same collective call).
    pub(super) fn agree_or_flag(&self, local: Result<()>, flag: bool, what: &str, name: &str) -> Result<bool> {
        let mine: [i64; 2] = [
            if local.is_err() { self.rank as i64 } else { i64::MAX },
            i64::from(!flag),
        ];
        let mut first = [i64::MAX; 2];
        crate::waiting::all_reduce_into(&self.comm, &mine[..], &mut first[..], SystemOperation::min());
        self.failed_at(local, first[0], what, name)?;
        Ok(first[1] == 0)
    }

    /// Tells every rank whether this one failed; returns this rank's error,
    /// or an [`Error::Mpi`] naming the first rank that failed.
    pub(super) fn agree(&self, local: Result<()>, what: &str, name: &str) -> Result<()> {
        let mine: i64 = if local.is_err() { self.rank as i64 } else { i64::MAX };
        let mut first = i64::MAX;
        crate::waiting::all_reduce_into(&self.comm, &mine, &mut first, SystemOperation::min());
        self.failed_at(local, first, what, name)
    }

    /// This rank's error, or an [`Error::Mpi`] naming `first`, the first
    /// rank that failed (`i64::MAX`: none).
    pub(super) fn failed_at(&self, local: Result<()>, first: i64, what: &str, name: &str) -> Result<()> {
        local?;
        if first != i64::MAX {
            return Err(Error::Mpi {
                reason: format!("rank {first} failed while {what} for `{name}`; every rank stops the exchange"),
            });
        }
        Ok(())
    }
}
