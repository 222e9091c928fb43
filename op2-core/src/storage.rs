use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::device::DeviceCell;
use crate::{BorrowFlag, Error, Result};

/// Host memory of a Dat or Global: a fixed-length buffer plus a borrow flag.
///
/// The buffer never moves or changes length while anyone holds the borrow
/// flag, so loops can work on raw pointers to it while they hold it. Only
/// [`HostStorage::swap_contents`], under both storages' exclusive borrows,
/// exchanges buffers (double buffering in O(1)).
pub(crate) struct HostStorage<T> {
    /// An owned `Box<[T]>` of `len` values, as a pointer that swaps atomically.
    data: AtomicPtr<T>,
    len: usize,
    flag: BorrowFlag,
    device: DeviceCell,
}

// SAFETY: every access to `data` goes through the borrow flag (guards and loops).
unsafe impl<T: Send> Send for HostStorage<T> {}
unsafe impl<T: Send + Sync> Sync for HostStorage<T> {}

impl<T> HostStorage<T> {
    pub(crate) fn new(values: Vec<T>) -> Self {
        let boxed: Box<[T]> = values.into_boxed_slice();
        let len = boxed.len();
        HostStorage {
            data: AtomicPtr::new(Box::into_raw(boxed) as *mut T),
            len,
            flag: BorrowFlag::default(),
            device: DeviceCell::default(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Exchanges the host buffers and the device buffers and states of two
    /// storages of one length in O(1). The caller holds both exclusive
    /// borrows, so nobody holds a pointer into either buffer; transfer
    /// counters stay with their storage.
    pub(crate) fn swap_contents(&self, other: &HostStorage<T>) {
        debug_assert_eq!(self.len, other.len, "swap of storages of different lengths");
        let mine = self.data.load(Ordering::Acquire);
        let theirs = other.data.swap(mine, Ordering::AcqRel);
        self.data.store(theirs, Ordering::Release);
        // Lock in address order: two swaps of the same pair never deadlock.
        let (first, second) = if (self as *const Self) < (other as *const Self) {
            (self, other)
        } else {
            (other, self)
        };
        let mut a = first.device.lock();
        let mut b = second.device.lock();
        std::mem::swap(&mut a.state, &mut b.state);
        std::mem::swap(&mut a.buffer, &mut b.buffer);
    }

    pub(crate) fn flag(&self) -> &BorrowFlag {
        &self.flag
    }

    pub(crate) fn device(&self) -> &DeviceCell {
        &self.device
    }

    /// Size of the host data in bytes.
    pub(crate) fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Brings the host copy up to date for a reader (`write == false`) or a
    /// writer, downloading from the device if it holds newer data. The caller
    /// holds the borrow; the device lock keeps two accessors from downloading
    /// at once.
    fn sync_host(&self, name: &str, write: bool) -> Result<()> {
        // SAFETY: while the device holds newer data no host reference to it
        // exists (a writing loop held the exclusive borrow, and accessors wait
        // on the device lock before using the data).
        let host = unsafe { std::slice::from_raw_parts_mut(self.ptr() as *mut u8, self.byte_len()) };
        self.device.lock().sync_host(host, write).map_err(|e| Error::Transfer {
            name: name.to_string(),
            reason: e.to_string(),
        })
    }

    /// Pointer to the first value. Dereferencing it needs a borrow of the flag.
    pub(crate) fn ptr(&self) -> *mut T {
        self.data.load(Ordering::Acquire)
    }

    pub(crate) fn try_read<'a>(&'a self, name: &str) -> Result<HostRef<'a, T>> {
        self.flag.try_shared().map_err(|how| Error::HostBorrow {
            name: name.to_string(),
            how,
        })?;
        let guard = HostRef { storage: self };
        self.sync_host(name, false)?;
        Ok(guard)
    }

    /// The exclusive borrow without touching the data (no device sync): for
    /// swapping storages, which moves the device state along.
    pub(crate) fn try_write_borrow<'a>(&'a self, name: &str) -> Result<HostMut<'a, T>> {
        self.flag.try_exclusive().map_err(|how| Error::HostBorrow {
            name: name.to_string(),
            how,
        })?;
        Ok(HostMut { storage: self })
    }

    pub(crate) fn try_write<'a>(&'a self, name: &str) -> Result<HostMut<'a, T>> {
        self.flag.try_exclusive().map_err(|how| Error::HostBorrow {
            name: name.to_string(),
            how,
        })?;
        let guard = HostMut { storage: self };
        self.sync_host(name, true)?;
        Ok(guard)
    }
}

impl<T> Drop for HostStorage<T> {
    fn drop(&mut self) {
        let ptr = *self.data.get_mut();
        // SAFETY: `ptr` came from `Box::into_raw` of a `Box<[T]>` of `len`
        // values (swaps exchange only buffers of equal length), owned here.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, self.len)) });
    }
}

/// Read access to host data (from `data_ro()`); derefs to `&[T]`.
pub struct HostRef<'a, T> {
    storage: &'a HostStorage<T>,
}

/// Write access to host data (from `data_mut()`); derefs to `&mut [T]`.
pub struct HostMut<'a, T> {
    storage: &'a HostStorage<T>,
}

impl<T> Deref for HostRef<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: we hold a shared borrow; nobody writes while it lives.
        unsafe { std::slice::from_raw_parts(self.storage.ptr(), self.storage.len()) }
    }
}

impl<T> Drop for HostRef<'_, T> {
    fn drop(&mut self) {
        self.storage.flag.release_shared();
    }
}

impl<T> Deref for HostMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: we hold the exclusive borrow.
        unsafe { std::slice::from_raw_parts(self.storage.ptr(), self.storage.len()) }
    }
}

impl<T> DerefMut for HostMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: we hold the exclusive borrow.
        unsafe { std::slice::from_raw_parts_mut(self.storage.ptr(), self.storage.len()) }
    }
}

impl<T> Drop for HostMut<'_, T> {
    fn drop(&mut self) {
        self.storage.flag.release_exclusive();
    }
}

impl<T: fmt::Debug> fmt::Debug for HostRef<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: fmt::Debug> fmt::Debug for HostMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
