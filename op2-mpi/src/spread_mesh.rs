//! A mesh spread over ranks, seen from a writer: where each local element
//! sits in the whole set, and every rank's owned rows of a table moved to
//! contiguous blocks of the whole (rank `r` gets rows
//! [`block_rows`]`(n, r, P)`), so that each rank writes one contiguous
//! slice of a file's table and together they write it whole, in the
//! global order, whatever the partition. Both ways of distributing a mesh
//! ([`Distributed`], [`BlockDistributed`]) are one.

use mpi::traits::*;
use op2_core::{Dat, Error, Map, Result, Scalar, Set};

use crate::all_to_all::{agree, exchange};
use crate::halo_exchange::Comm;
use crate::{block_owner, block_rows, BlockDistributed, Distributed, SetLayout};

/// A mesh spread over the ranks (see the module's header).
pub trait SpreadMesh {
    /// The global number of each of this rank's elements of the local set
    /// `local` (owned first, then halos), how many are owned, and the
    /// whole set's size.
    ///
    /// # Errors
    /// [`Error::Mpi`] if `local` is not one of this mesh's local sets.
    fn numbering(&self, local: &Set) -> Result<SetNumbering<'_>>;

    /// This rank's block of a whole table (`row_bytes` bytes a row, a
    /// multiple of 4) whose rows each rank holds for its owned elements of
    /// `local`, in local order (`owned` holds exactly those rows).
    /// Collective; a failure on any rank is an error on every rank.
    ///
    /// # Errors
    /// As [`SpreadMesh::numbering`]; [`Error::Mpi`] if `owned` is not
    /// whole rows of the owned elements, or the exchange cannot be made.
    fn rows_to_blocks(&self, local: &Set, owned: &[u8], row_bytes: usize) -> Result<Vec<u8>>;

    /// This rank's number and the number of ranks.
    fn rank_and_size(&self) -> (usize, usize);

    /// Every rank's `mine` made common (collective): if any rank failed,
    /// every rank returns an error (so that no rank goes on into a
    /// collective the others have left): its own where it failed, else the
    /// lowest failing rank's.
    ///
    /// # Errors
    /// As above.
    fn agree(&self, mine: Result<()>) -> Result<()>;
}

/// `mine`'s value if every rank of `mesh` succeeded (see
/// [`SpreadMesh::agree`]).
fn agreed<T>(mesh: &dyn SpreadMesh, mine: Result<T>) -> Result<T> {
    match mine {
        Ok(v) => mesh.agree(Ok(())).map(|()| v),
        Err(e) => {
            mesh.agree(Err(e))?;
            // `agree` makes a failure every rank's: not reached.
            Err(Error::Mpi {
                reason: "a failure was agreed as a success".to_string(),
            })
        }
    }
}

/// Where a rank's elements of a set sit in the whole set.
pub struct SetNumbering<'a> {
    /// The global number of each local element: owned, then halos.
    pub globals: &'a [u32],
    /// How many of them this rank owns (the first ones).
    pub owned: usize,
    /// The whole set's size.
    pub global_size: usize,
}

/// This rank's block of `local`'s values in the global order (see
/// [`SpreadMesh::rows_to_blocks`]). Collective.
///
/// # Errors
/// As [`SpreadMesh::rows_to_blocks`].
pub fn dat_to_blocks<T: Scalar>(mesh: &dyn SpreadMesh, local: &Dat<T>) -> Result<Vec<T>> {
    let read = (|| {
        let owned = mesh.numbering(local.set())?.owned;
        let data = local.try_data_ro()?;
        Ok(bytemuck::cast_slice::<T, u8>(&data[..owned * local.dim()]).to_vec())
    })();
    let bytes = agreed(mesh, read)?;
    let block = mesh.rows_to_blocks(local.set(), &bytes, local.dim() * std::mem::size_of::<T>())?;
    Ok(block
        .chunks_exact(std::mem::size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .collect())
}

/// This rank's block of `local`'s table in the global order and numbering:
/// each entry the global number of its target. Collective.
///
/// # Errors
/// As [`SpreadMesh::rows_to_blocks`]; [`Error::Mpi`] if the target set is
/// not one of the mesh's.
pub fn map_to_blocks(mesh: &dyn SpreadMesh, local: &Map) -> Result<Vec<i32>> {
    let translated = (|| {
        let from = mesh.numbering(local.from_set())?;
        let to = mesh.numbering(local.to_set())?;
        Ok(local.values()[..from.owned * local.arity()]
            .iter()
            .map(|&l| to.globals[l as usize] as i32)
            .collect::<Vec<i32>>())
    })();
    let (entries, arity) = (agreed(mesh, translated)?, local.arity());
    let block = mesh.rows_to_blocks(local.from_set(), bytemuck::cast_slice(&entries), arity * 4)?;
    Ok(block.chunks_exact(4).map(bytemuck::pod_read_unaligned).collect())
}

/// Moves each owned row to the rank whose block holds it (see the module's
/// header). Rows travel as 4-byte words (every scalar type is a whole
/// number of them), so a rank may send up to 2^31 words (8 GiB), not bytes.
fn to_blocks(
    comm: &Comm,
    (rank, ranks): (usize, usize),
    n: Result<SetNumbering<'_>>,
    owned: &[u8],
    row: usize,
) -> Result<Vec<u8>> {
    // Agreed, so that a rank given a set not of the mesh, or the wrong
    // rows, fails with the others instead of leaving them in the exchange.
    let fits = match &n {
        Err(e) => Err(Error::Mpi { reason: e.to_string() }),
        Ok(n) if row == 0 || row % 4 != 0 || Some(owned.len()) != n.owned.checked_mul(row) => Err(Error::Mpi {
            reason: format!(
                "{} bytes are not {} owned rows of {row} bytes each (a whole number of 4-byte words)",
                owned.len(),
                n.owned
            ),
        }),
        Ok(_) => Ok(()),
    };
    if let Err(e) = agree(&comm.0, fits) {
        // A rank whose set was not the mesh's keeps that error, typed.
        return Err(n.err().unwrap_or(e));
    }
    let n = n?;
    let n = &n;
    let (words, nranks) = (row / 4, ranks as u32);
    let mut ids: Vec<Vec<u32>> = vec![Vec::new(); ranks];
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); ranks];
    for (l, &g) in n.globals[..n.owned].iter().enumerate() {
        let q = block_owner(g as usize, n.global_size, nranks) as usize;
        ids[q].push(g);
        let bytes = &owned[l * row..(l + 1) * row];
        rows[q].extend(
            bytes
                .chunks_exact(4)
                .map(|w| u32::from_ne_bytes(w.try_into().expect("4 bytes"))),
        );
    }
    let ids = exchange(&comm.0, &ids, "moving rows into blocks")?;
    let rows = exchange(&comm.0, &rows, "moving rows into blocks")?;
    let block = block_rows(n.global_size, rank as u32, nranks);
    let mut out = vec![0u8; block.len() * row];
    for (ids, rows) in ids.iter().zip(&rows) {
        for (i, &g) in ids.iter().enumerate() {
            let at = (g as usize - block.start) * row;
            for (k, w) in rows[i * words..(i + 1) * words].iter().enumerate() {
                out[at + 4 * k..at + 4 * k + 4].copy_from_slice(&w.to_ne_bytes());
            }
        }
    }
    Ok(out)
}

impl SpreadMesh for Distributed {
    fn numbering(&self, local: &Set) -> Result<SetNumbering<'_>> {
        let (layout, global_size) = self.layout_of(local)?;
        Ok(numbering(layout, global_size))
    }

    fn rows_to_blocks(&self, local: &Set, owned: &[u8], row_bytes: usize) -> Result<Vec<u8>> {
        to_blocks(
            self.comm(),
            self.rank_and_size(),
            self.numbering(local),
            owned,
            row_bytes,
        )
    }

    fn rank_and_size(&self) -> (usize, usize) {
        let c = &self.comm().0;
        (c.rank() as usize, c.size() as usize)
    }

    fn agree(&self, mine: Result<()>) -> Result<()> {
        agree(&self.comm().0, mine)
    }
}

impl SpreadMesh for BlockDistributed {
    fn numbering(&self, local: &Set) -> Result<SetNumbering<'_>> {
        let (layout, global_size) = self.layout_of(local)?;
        Ok(numbering(layout, global_size))
    }

    fn rows_to_blocks(&self, local: &Set, owned: &[u8], row_bytes: usize) -> Result<Vec<u8>> {
        to_blocks(
            self.comm(),
            self.rank_and_size(),
            self.numbering(local),
            owned,
            row_bytes,
        )
    }

    fn rank_and_size(&self) -> (usize, usize) {
        BlockDistributed::rank_and_size(self)
    }

    fn agree(&self, mine: Result<()>) -> Result<()> {
        agree(&self.comm().0, mine)
    }
}

fn numbering(layout: &SetLayout, global_size: usize) -> SetNumbering<'_> {
    SetNumbering {
        globals: &layout.globals,
        owned: layout.regions.owned_size(),
        global_size,
    }
}
