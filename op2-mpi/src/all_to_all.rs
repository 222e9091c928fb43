//! Personalised all-to-all exchanges of variable length (`MPI_Alltoallv`),
//! and the block directory: the rank holding row `g` of a set cut into
//! contiguous blocks answers questions about `g` (its owner, say), so that
//! no rank needs a table as long as the whole set.

use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use op2_core::{Error, Result};

use crate::block_owner;

/// Sends `sends[q]` to rank `q`, for every `q`, and returns what each rank
/// sent to this one (`received[q]` from rank `q`). Collective.
pub(crate) fn exchange<C: Communicator, T: Equivalence + Copy + Default>(
    comm: &C,
    sends: &[Vec<T>],
    what: &str,
) -> Result<Vec<Vec<T>>> {
    let counts: Vec<usize> = sends.iter().map(Vec::len).collect();
    let (incoming, recv_counts) = exchange_flat(comm, &sends.concat(), &counts, what)?;
    let mut received = Vec::with_capacity(recv_counts.len());
    let mut rest = &incoming[..];
    for c in recv_counts {
        let (head, tail) = rest.split_at(c);
        received.push(head.to_vec());
        rest = tail;
    }
    Ok(received)
}

/// Sends the next `counts[q]` values of `flat` to rank `q`, for every `q`
/// in order, and returns what every rank sent to this one, one after
/// another in rank order, with how many came from each. Holds no copy of
/// either side: the largest tables move this way. Collective.
pub(crate) fn exchange_flat<C: Communicator, T: Equivalence + Copy + Default>(
    comm: &C,
    flat: &[T],
    counts: &[usize],
    what: &str,
) -> Result<(Vec<T>, Vec<usize>)> {
    let p = comm.size() as usize;
    debug_assert_eq!(counts.len(), p);
    debug_assert_eq!(counts.iter().sum::<usize>(), flat.len());
    let count = |n: usize| {
        i32::try_from(n).map_err(|_| Error::Mpi {
            reason: format!("{what}: {n} values for one rank, more than an MPI count holds"),
        })
    };
    // Every check ends in an agreement, so that a rank with too much to
    // send or receive fails with the others instead of leaving them in the
    // collective.
    let both = |r: Result<Vec<i32>>| match r {
        Ok(v) => agree(comm, Ok(())).map(|()| v),
        Err(e) => agree(comm, Err(e)).map(|()| Vec::new()),
    };
    let send_counts = both(counts.iter().map(|&c| count(c)).collect())?;
    let mut recv_counts = vec![0i32; p];
    crate::waiting::all_to_all_into(comm, &send_counts[..], &mut recv_counts[..]);
    let displs = |counts: &[i32]| -> Result<Vec<i32>> {
        let mut at = 0usize;
        counts
            .iter()
            .map(|&c| {
                let d = count(at)?;
                at += c as usize;
                Ok(d)
            })
            .collect()
    };
    let send_displs = both(displs(&send_counts))?;
    let recv_displs = both(displs(&recv_counts))?;
    let mut incoming = vec![T::default(); recv_counts.iter().map(|&c| c as usize).sum()];
    {
        let out = Partition::new(flat, &send_counts[..], &send_displs[..]);
        let mut into = PartitionMut::new(&mut incoming[..], &recv_counts[..], &recv_displs[..]);
        crate::waiting::all_to_all_varcount_into(comm, &out, &mut into);
    }
    Ok((incoming, recv_counts.iter().map(|&c| c as usize).collect()))
}

/// Asks, for every id in `ids` (global rows of a set of `n` cut into blocks),
/// the rank holding its row, which answers with `answer(row within its
/// block)`; returns the answers in the order of `ids`. Collective.
pub(crate) fn ask_blocks<C: Communicator>(
    comm: &C,
    ids: &[u32],
    n: usize,
    block: &[u32],
    block_start: usize,
    what: &str,
) -> Result<Vec<u32>> {
    let p = comm.size() as u32;
    let mut questions = vec![Vec::new(); p as usize];
    for &g in ids {
        questions[block_owner(g as usize, n, p) as usize].push(g);
    }
    let counts: Vec<usize> = questions.iter().map(Vec::len).collect();
    let flat = questions.concat();
    drop(questions);
    // Each question is answered in its place: the answers go back as the
    // questions came, with no second table.
    let (mut asked, asked_counts) = exchange_flat(comm, &flat, &counts, what)?;
    drop(flat);
    for g in &mut asked {
        *g = block[*g as usize - block_start];
    }
    let (answers, _) = exchange_flat(comm, &asked, &asked_counts, what)?;
    drop(asked);
    let mut next = starts(&counts);
    Ok(ids
        .iter()
        .map(|&g| {
            let at = &mut next[block_owner(g as usize, n, p) as usize];
            *at += 1;
            answers[*at - 1]
        })
        .collect())
}

/// Where each of runs of `counts` values starts when laid end to end.
pub(crate) fn starts(counts: &[usize]) -> Vec<usize> {
    let mut at = 0;
    counts
        .iter()
        .map(|&c| {
            at += c;
            at - c
        })
        .collect()
}

/// [`agree`], and an `Err` on every rank unless every rank's `shape` is
/// the same: the ranks are about to make collective calls whose number and
/// sizes follow from it (one exchange per map, one per Dat), and a rank
/// that declared something else would leave the others waiting or cut rows
/// at the wrong size. `what` names what `shape` describes in the message.
/// One all-reduce where all is well, as `agree` alone makes: an extra
/// collective before the partitioner raised the largest rank's peak memory
/// by 2-3 MiB of MPICH's buffers in Airfoil's 720K run on 4 ranks.
/// Collective.
pub(crate) fn agree_shaped<C: Communicator>(comm: &C, local: Result<()>, what: &str, shape: &str) -> Result<()> {
    use mpi::collective::SystemOperation;
    // FNV-1a: the same on every rank, whatever the build's hasher keys;
    // 62 bits of it, so that it and its negation are i64s (MPICH's MIN on
    // 64-bit integers compared as signed here: u64::MAX came out below 1).
    let digest = (shape.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    }) >> 2) as i64;
    // The lowest failing rank, the lowest digest and the highest (as the
    // lowest of the negations), in one reduction.
    let failed = if local.is_err() {
        i64::from(comm.rank())
    } else {
        i64::MAX
    };
    let mine = [failed, digest, -digest];
    let mut all = [0i64; 3];
    crate::waiting::all_reduce_into(comm, &mine[..], &mut all[..], SystemOperation::min());
    if all[0] != i64::MAX {
        return agree(comm, local);
    }
    if all[1] == -all[2] {
        return Ok(());
    }
    // The ranks apart from the lowest digest's say what they have.
    agree(
        comm,
        if digest == all[1] {
            Ok(())
        } else {
            Err(Error::Mpi {
                reason: format!(
                    "rank {}'s {what} differ from another rank's (this rank has {shape}): every rank must declare the same ones, in the same order",
                    comm.rank()
                ),
            })
        },
    )
}

/// `mine`'s value if every rank succeeded and (where `shaped` gives what
/// and its shape) every rank's shape is the same; else every rank's common
/// `Err`. Every rank must pass `shaped` alike, `Some` or `None`. Collective.
pub(crate) fn agreed<T>(comm: &impl Communicator, mine: Result<T>, shaped: Option<(&str, &str)>) -> Result<T> {
    let agree = |local: Result<()>| match shaped {
        None => agree(comm, local),
        Some((what, shape)) => agree_shaped(comm, local, what, shape),
    };
    match mine {
        Ok(v) => agree(Ok(())).map(|()| v),
        Err(e) => Err(agree(Err(e)).err().unwrap_or_else(|| Error::Mpi {
            reason: "a failure was agreed as a success".to_string(),
        })),
    }
}

/// Every rank's `Err` made common: if some rank failed, every rank returns
/// an `Err` (so that no rank goes on into a collective the others have
/// left): its own where it failed, else the failure of the lowest rank
/// that did, its message broadcast. Collective.
pub(crate) fn agree<C: Communicator>(comm: &C, local: Result<()>) -> Result<()> {
    use mpi::collective::SystemOperation;
    let me = comm.rank();
    let mine = if local.is_err() { me } else { i32::MAX };
    let mut first = i32::MAX;
    crate::waiting::all_reduce_into(comm, &mine, &mut first, SystemOperation::min());
    if first == i32::MAX {
        return Ok(());
    }
    let mut text = match &local {
        Err(e) if me == first => e.to_string().into_bytes(),
        _ => Vec::new(),
    };
    let mut len = text.len() as u64;
    let root = comm.process_at_rank(first);
    crate::waiting::broadcast_into(&root, &mut len);
    text.resize(len as usize, 0);
    crate::waiting::broadcast_into(&root, &mut text[..]);
    match local {
        // A rank that failed keeps its own error, typed as it was.
        Err(e) => Err(e),
        Ok(()) => Err(Error::Mpi {
            reason: format!("rank {first}: {}", String::from_utf8_lossy(&text)),
        }),
    }
}
