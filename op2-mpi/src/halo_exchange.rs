//! Halo exchange on MPI (MPICH through rsmpi): a distributed set's
//! [`Distribution`], which exchanges the halos of its Dats along the lists of
//! `halo_layout.rs` and reduces Globals across ranks. Non-blocking sends and
//! receives use the raw MPI calls so that an exchange can stay in flight while
//! the core elements compute; one message per neighbour carries all of a
//! Dat's halo segments. The same lists in one piece ([`HaloLists`]) let a
//! device backend pack and unpack the records in device memory
//! (`op2_core::device_halo`), and only the records go through here.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use mpi::collective::SystemOperation;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use op2_core::{
    Access, DatHandle, DeviceRecordExchange, Distribution, Error, HaloLists, PendingExchange, PendingRecords,
    RecordBuffer, Result, ScalarType,
};

use crate::Neighbour;

/// A communicator shared by the distributed sets of one run.
pub struct Comm(pub(crate) SimpleCommunicator);

// SAFETY: op2 calls MPI only from the thread that runs `par_loop` (worker
// threads never do), which MPI_THREAD_SINGLE/FUNNELED allows.
unsafe impl Send for Comm {}
// SAFETY: as above.
unsafe impl Sync for Comm {}

pub(crate) fn mpi_error(what: &str, code: c_int) -> Error {
    Error::Mpi {
        reason: format!("{what} failed with MPI error code {code}"),
    }
}

/// One distributed set's communication: its neighbours' send and receive
/// lists. The set's index is the message tag, so exchanges of different sets
/// never match each other's messages.
pub struct SetComm {
    pub(crate) comm: Arc<Comm>,
    pub(crate) neighbours: Vec<Neighbour>,
    pub(crate) tag: c_int,
    /// The lists in one piece (`None` if the halo is not one run of
    /// elements, which the layout never makes).
    lists: Option<Arc<HaloLists>>,
}

impl SetComm {
    /// The communication of the set with message tag `tag` and these
    /// neighbours.
    pub(crate) fn new(comm: Arc<Comm>, neighbours: Vec<Neighbour>, tag: c_int) -> SetComm {
        let exports = neighbours.iter().flat_map(|nb| nb.export.iter().copied()).collect();
        // Received neighbour after neighbour, each its exec part first.
        let receives: Vec<std::ops::Range<usize>> = neighbours
            .iter()
            .flat_map(|nb| [nb.import.0.clone(), nb.import.1.clone()])
            .collect();
        let lists = HaloLists::new(exports, &receives).map(Arc::new);
        SetComm {
            comm,
            neighbours,
            tag,
            lists,
        }
    }
}

/// Whether this MPI reads and writes CUDA device memory, asked once
/// (MPICH's `MPIX_Query_cuda_support`, after `MPI_Init`).
fn mpi_takes_cuda_memory() -> bool {
    static TAKES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: a query without arguments; MPI is initialised (a SetComm
    // exists only under `Mpi::init`).
    *TAKES.get_or_init(|| unsafe { ffi::MPIX_Query_cuda_support() } != 0)
}

/// The most bytes one message of an exchange carries (1 GiB: an MPI count
/// is an `int`, and some MPIs fail below `i32::MAX` bytes).
const MESSAGE_BYTES: usize = 1 << 30;

/// `0..bytes` cut into pieces of at most [`MESSAGE_BYTES`].
fn pieces(bytes: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..bytes)
        .step_by(MESSAGE_BYTES)
        .map(move |start| start..bytes.min(start + MESSAGE_BYTES))
}

/// What one exchange posts with a neighbour: the receive into, or the send
/// from, the memory at the pointer.
#[derive(Clone, Copy)]
enum Post {
    Receive(*mut u8),
    Send(*const u8),
}

/// Requests in flight over memory their owner keeps; waited for when
/// dropped.
#[derive(Default)]
struct PendingRequests {
    requests: Vec<ffi::MPI_Request>,
    done: bool,
}

impl PendingRequests {
    fn wait_all(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        // SAFETY: the requests are live; their memory is the caller's to keep.
        let rc = unsafe { crate::waiting::finish_all(&mut self.requests) };
        if rc != 0 {
            return Err(mpi_error("MPI_Waitall", rc));
        }
        Ok(())
    }
}

impl PendingExchange for PendingRequests {
    fn wait(mut self: Box<Self>) -> Result<()> {
        self.wait_all()
    }
}

impl Drop for PendingRequests {
    fn drop(&mut self) {
        // Never let MPI use memory its owner may free: wait first.
        let _ = self.wait_all();
    }
}

impl SetComm {
    /// Posts the receive of `bytes` bytes from `rank` into `at`, pushing
    /// its requests to `requests`: one message per [`MESSAGE_BYTES`] (an
    /// MPI count is an `int`), matched in order on both sides, since both
    /// cut the same length alike and MPI keeps one sender's messages of
    /// one tag in order.
    ///
    /// # Safety
    /// `at` holds `bytes` bytes MPI may write, kept until the requests end.
    unsafe fn receive_from(
        &self,
        rank: u32,
        at: *mut u8,
        bytes: usize,
        requests: &mut Vec<ffi::MPI_Request>,
    ) -> Result<()> {
        // SAFETY: this function's contract.
        unsafe { self.post(Post::Receive(at), rank, bytes, requests) }
    }

    /// Posts the send of `bytes` bytes at `at` to `rank`, in pieces as
    /// [`SetComm::receive_from`] receives them.
    ///
    /// # Safety
    /// `at` holds `bytes` bytes MPI may read, kept until the requests end.
    unsafe fn send_to(
        &self,
        rank: u32,
        at: *const u8,
        bytes: usize,
        requests: &mut Vec<ffi::MPI_Request>,
    ) -> Result<()> {
        // SAFETY: this function's contract.
        unsafe { self.post(Post::Send(at), rank, bytes, requests) }
    }

    /// Posts `what` of `bytes` bytes with `rank`, a message a piece.
    ///
    /// # Safety
    /// As [`SetComm::receive_from`] and [`SetComm::send_to`].
    unsafe fn post(&self, what: Post, rank: u32, bytes: usize, requests: &mut Vec<ffi::MPI_Request>) -> Result<()> {
        for piece in pieces(bytes) {
            // SAFETY: reads a constant the MPI library defines.
            let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
            let (count, peer, comm) = (piece.len() as c_int, rank as c_int, self.comm.0.as_raw());
            let u8_type = ffi::RSMPI_UINT8_T;
            // SAFETY: the caller's contract; the piece lies in its memory.
            let (rc, call) = unsafe {
                match what {
                    Post::Receive(at) => (
                        ffi::MPI_Irecv(
                            at.wrapping_add(piece.start) as *mut c_void,
                            count,
                            u8_type,
                            peer,
                            self.tag,
                            comm,
                            &mut req,
                        ),
                        "MPI_Irecv",
                    ),
                    Post::Send(at) => (
                        ffi::MPI_Isend(
                            at.wrapping_add(piece.start) as *const c_void,
                            count,
                            u8_type,
                            peer,
                            self.tag,
                            comm,
                            &mut req,
                        ),
                        "MPI_Isend",
                    ),
                }
            };
            match rc {
                0 => requests.push(req),
                _ => return Err(mpi_error(call, rc)),
            }
        }
        Ok(())
    }

    /// Posts, per neighbour, the receive of its records into `receive` and
    /// the send of the exports' records from `send` (`record` bytes each),
    /// pushing the requests to `requests`.
    ///
    /// # Safety
    /// `send` holds the exports' records and `receive` room for the
    /// imports', in memory MPI can use, both kept until the requests end.
    unsafe fn post_records(
        &self,
        send: *const u8,
        receive: *mut u8,
        record: usize,
        requests: &mut Vec<ffi::MPI_Request>,
    ) -> Result<()> {
        let (mut at_send, mut at_receive) = (0, 0);
        for nb in &self.neighbours {
            let incoming = (nb.import.0.len() + nb.import.1.len()) * record;
            if incoming > 0 {
                // SAFETY: the slice lies in `receive` (this function's contract).
                unsafe { self.receive_from(nb.rank, receive.wrapping_add(at_receive), incoming, requests) }?;
                at_receive += incoming;
            }
            let outgoing = nb.export.len() * record;
            if outgoing > 0 {
                // SAFETY: as above, in `send`.
                unsafe { self.send_to(nb.rank, send.wrapping_add(at_send), outgoing, requests) }?;
                at_send += outgoing;
            }
        }
        Ok(())
    }
}

impl DeviceRecordExchange for SetComm {
    fn takes_device_memory(&self) -> bool {
        mpi_takes_cuda_memory()
    }

    unsafe fn start_device_record_exchange(
        &self,
        send: u64,
        receive: u64,
        record: usize,
    ) -> Result<Box<dyn PendingExchange>> {
        let mut pending = PendingRequests::default();
        // SAFETY: the caller's contract: device records MPI can use, kept
        // until the pending exchange ends (which waits when dropped).
        unsafe { self.post_records(send as *const u8, receive as *mut u8, record, &mut pending.requests) }?;
        Ok(Box::new(pending))
    }
}

/// A record exchange in flight: the two buffers stay here (their heap
/// storage fixed) until MPI is done with them.
struct PendingMpiRecords {
    requests: PendingRequests,
    buffers: Option<(RecordBuffer, RecordBuffer)>,
}

impl PendingRecords for PendingMpiRecords {
    fn wait(mut self: Box<Self>) -> Result<(RecordBuffer, RecordBuffer)> {
        self.requests.wait_all()?;
        match self.buffers.take() {
            Some(b) => Ok(b),
            None => unreachable!("given back once, by this wait"),
        }
    }
}

/// A Dat's exchange in flight. The requests come first: a drop waits for
/// them before the buffers after them go.
struct PendingMpi {
    requests: PendingRequests,
    _sends: Vec<Vec<u8>>,
    receives: Vec<(Vec<u8>, Neighbour)>,
    base: usize,
    elem: usize,
}

impl PendingExchange for PendingMpi {
    fn wait(mut self: Box<Self>) -> Result<()> {
        self.requests.wait_all()?;
        for (buf, nb) in &self.receives {
            let (exec, nonexec) = &nb.import;
            let split = exec.len() * self.elem;
            // SAFETY: the loop holds the Dat's borrow; the import ranges are
            // halo elements of it and the buffer holds exactly their bytes.
            unsafe {
                let dst = self.base as *mut u8;
                std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(exec.start * self.elem), split);
                std::ptr::copy_nonoverlapping(
                    buf.as_ptr().add(split),
                    dst.add(nonexec.start * self.elem),
                    nonexec.len() * self.elem,
                );
            }
        }
        Ok(())
    }
}

impl Distribution for SetComm {
    fn start_exchange(&self, dat: &dyn DatHandle) -> Result<Box<dyn PendingExchange>> {
        let elem = dat.dim() * dat.scalar().size();
        let base = dat.host_bytes() as usize;
        let mut pending = PendingMpi {
            requests: PendingRequests::default(),
            _sends: Vec::new(),
            receives: Vec::new(),
            base,
            elem,
        };
        for nb in &self.neighbours {
            let incoming = (nb.import.0.len() + nb.import.1.len()) * elem;
            if incoming > 0 {
                let mut buf = vec![0u8; incoming];
                // SAFETY: `buf` moves into `pending` (its heap storage stays
                // put) until the request completes.
                unsafe { self.receive_from(nb.rank, buf.as_mut_ptr(), incoming, &mut pending.requests.requests) }?;
                pending.receives.push((buf, nb.clone()));
            }
            if !nb.export.is_empty() {
                let mut buf = Vec::with_capacity(nb.export.len() * elem);
                for &l in &nb.export {
                    // SAFETY: exports are owned elements of the borrowed Dat.
                    let src = unsafe { std::slice::from_raw_parts((base as *const u8).add(l as usize * elem), elem) };
                    buf.extend_from_slice(src);
                }
                // SAFETY: as above.
                unsafe { self.send_to(nb.rank, buf.as_ptr(), buf.len(), &mut pending.requests.requests) }?;
                pending._sends.push(buf);
            }
        }
        Ok(Box::new(pending))
    }

    fn all_reduce(&self, values: &mut [u8], scalar: ScalarType, op: Access) -> Result<()> {
        all_reduce(&self.comm, values, scalar, op);
        Ok(())
    }

    fn halo_lists(&self) -> Option<Arc<HaloLists>> {
        self.lists.clone()
    }

    fn device_records(&self) -> Option<&dyn DeviceRecordExchange> {
        Some(self)
    }

    fn start_record_exchange(
        &self,
        send: RecordBuffer,
        mut receive: RecordBuffer,
        record: usize,
    ) -> Result<Box<dyn PendingRecords>> {
        let Some(lists) = &self.lists else {
            return Err(Error::Mpi {
                reason: "this set's halo is not one run of elements: exchange through start_exchange".to_string(),
            });
        };
        let (out, into) = (lists.exports.len() * record, lists.imports.len() * record);
        if send.len() != out || receive.len() != into {
            return Err(Error::Mpi {
                reason: format!(
                    "a record exchange of {record}-byte records needs {out} bytes to send and room for {into}, \
                     and was given {} and {}",
                    send.len(),
                    receive.len()
                ),
            });
        }
        // The memory behind both buffers stays put while they move into
        // `pending` (they own heap or pinned allocations).
        let (send_at, receive_at) = (send.as_slice().as_ptr(), receive.as_mut_slice().as_mut_ptr());
        let mut pending = PendingMpiRecords {
            requests: PendingRequests::default(),
            buffers: Some((send, receive)),
        };
        // SAFETY: the sizes were checked above; `pending` keeps both
        // buffers until its requests end (it waits when dropped).
        unsafe { self.post_records(send_at, receive_at, record, &mut pending.requests.requests) }?;
        Ok(Box::new(pending))
    }

    fn rank_and_size(&self) -> (usize, usize) {
        (self.comm.0.rank() as usize, self.comm.0.size() as usize)
    }
}

/// Combines `values` across ranks in place (sum, min or max).
pub(crate) fn all_reduce(comm: &Comm, values: &mut [u8], scalar: ScalarType, op: Access) {
    macro_rules! typed {
        ($t:ty) => {{
            // Copied out and back: `values` need not be aligned for $t (a
            // caller's `[u8; 8]` on the stack is not).
            const SIZE: usize = std::mem::size_of::<$t>();
            let send: Vec<$t> = values
                .chunks_exact(SIZE)
                .map(|c| <$t>::from_ne_bytes(c.try_into().expect("a value's bytes")))
                .collect();
            let mut v = send.clone();
            match op {
                Access::Min => crate::waiting::all_reduce_into(&comm.0, &send[..], &mut v[..], SystemOperation::min()),
                Access::Max => crate::waiting::all_reduce_into(&comm.0, &send[..], &mut v[..], SystemOperation::max()),
                _ => crate::waiting::all_reduce_into(&comm.0, &send[..], &mut v[..], SystemOperation::sum()),
            }
            for (c, x) in values.chunks_exact_mut(SIZE).zip(&v) {
                c.copy_from_slice(&x.to_ne_bytes());
            }
        }};
    }
    match scalar {
        ScalarType::F64 => typed!(f64),
        ScalarType::F32 => typed!(f32),
        ScalarType::I32 => typed!(i32),
        ScalarType::I64 => typed!(i64),
        ScalarType::U32 if matches!(op, Access::Min | Access::Max) => {
            // MPICH 4.0 (Debian 12's) compares unsigned types as signed in
            // MIN and MAX (it made min(1, u32::MAX) u32::MAX). Flipping the
            // top bit maps unsigned order onto signed order, which every
            // MPI gets right, and back.
            let flip = |values: &mut [u8]| {
                for v in values.chunks_exact_mut(4) {
                    let x = u32::from_ne_bytes(v.try_into().expect("4 bytes")) ^ 0x8000_0000;
                    v.copy_from_slice(&x.to_ne_bytes());
                }
            };
            flip(values);
            typed!(i32);
            flip(values);
        }
        ScalarType::U32 => typed!(u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cut_in_pieces_an_mpi_count_holds() {
        assert_eq!(pieces(0).count(), 0);
        assert_eq!(pieces(5).collect::<Vec<_>>(), vec![0..5]);
        let big = 2 * MESSAGE_BYTES + 7;
        let cut: Vec<_> = pieces(big).collect();
        assert_eq!(
            cut,
            vec![
                0..MESSAGE_BYTES,
                MESSAGE_BYTES..2 * MESSAGE_BYTES,
                2 * MESSAGE_BYTES..big
            ]
        );
        assert!(cut.iter().all(|p| p.len() <= i32::MAX as usize));
    }
}
