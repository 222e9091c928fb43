//! How loops read a message list: its variables as whole-Dat slices
//! (`m(READ, list[..])`, the `SliceSource` of a `MessageList`) and its bins
//! for `list(NEAR)` (`near_bins_spec`).

use op2_core::view::SliceSource;
use op2_core::{Access, ArgData, ArgSpec, Dat, Row, Scalar, Stage, WholeArg};

use super::{MessageList, NearArgs};

impl SliceSource for MessageList {
    type View<T: Scalar> = MessageView<T>;
    fn slice_arg_spec<'a, T: Scalar>(&'a self, dat: &'a Dat<T>, access: Access) -> ArgSpec<'a> {
        let whole = WholeArg {
            list: self.name(),
            set: self.set(),
            count: self.whole_count(),
            near: None,
        };
        ArgSpec::whole(ArgData::Dat(dat), access, whole)
    }
    fn slice_view<T: Scalar>(&self, dat: &Dat<T>) -> MessageView<T> {
        MessageView {
            ptr: dat.host_ptr(),
            // Validation refuses the loop if this is too many for the Dat.
            count: self.len(),
        }
    }
    fn slice_capacity(&self) -> usize {
        0
    }
}

/// A message list's variable, `m(READ, list[..])`: every kernel call reads
/// the same first `count` messages in place.
#[derive(Clone, Copy)]
pub struct MessageView<T> {
    ptr: *mut T,
    count: usize,
}

// SAFETY: loops only read through it (validation refuses other modes).
unsafe impl<T: Send> Send for MessageView<T> {}
// SAFETY: as for Send, just above.
unsafe impl<T: Sync> Sync for MessageView<T> {}

impl<T: Scalar> MessageView<T> {
    /// Every message's value, read in place.
    ///
    /// # Safety
    /// The loop is validated (the list built, the Dat its variable) and its
    /// data borrowed.
    #[inline(always)]
    pub unsafe fn row<'t, S: Stage<T> + 't>(self, _e: usize) -> Row<'t, S> {
        Row::whole(self.ptr as *const S, self.count)
    }

    /// Never runs: validation refuses a message list argument that is not READ.
    ///
    /// # Safety
    /// None needed; it touches nothing.
    #[inline(always)]
    pub unsafe fn zero_into<S: Stage<T>>(self, _e: usize, buf: &mut Vec<S>) {
        buf.clear();
    }

    /// Never runs: validation refuses a message list argument that is not READ.
    ///
    /// # Safety
    /// None needed; it touches nothing.
    #[inline(always)]
    pub unsafe fn add_from<S: Stage<T>>(self, _e: usize, _buf: &[S]) {}
}

/// The description of `list(NEAR)`'s first hidden argument: the bins'
/// offsets, read whole.
pub fn near_bins_spec<'a>(near: &NearArgs<'a>) -> ArgSpec<'a> {
    let whole = WholeArg {
        list: near.list.name(),
        set: near.starts.set(),
        count: near.starts_count,
        near: Some(near.grid.near_kind()),
    };
    ArgSpec::whole(ArgData::Dat(near.starts), Access::Read, whole)
}
