//! Host memory of a Dat or Global: `HostStorage` pairs a buffer with its `BorrowFlag` and
//! `DeviceCell`, and the guards `HostRef` and `HostMut` that `data_ro` and `data_mut`
//! return. The buffer never moves while borrowed, so loops can use raw pointers into it.
//! Only an O(1) swap and a dynamic set's resize change it, under the exclusive borrow.
//! Host access first brings the host copy up to date from the device.
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use crate::device::DeviceCell;
use crate::{BorrowFlag, Error, Result};

/// Host memory of a Dat or Global: a buffer plus a borrow flag.
///
/// The buffer never moves or changes length while anyone holds the borrow
/// flag, so loops can work on raw pointers to it while they hold it. Only
/// [`HostStorage::swap_contents`] (double buffering in O(1)) and
/// [`HostStorage::resize`] (a dynamic set's compaction), both under the
/// exclusive borrow, change the buffer.
pub(crate) struct HostStorage<T> {
    /// An owned `Box<[T]>` of `capacity` values, as a pointer that swaps
    /// atomically; the first `len` are the data.
    data: AtomicPtr<T>,
    len: AtomicUsize,
    capacity: AtomicUsize,
    flag: BorrowFlag,
    device: DeviceCell,
}

// SAFETY: every access to `data` goes through the borrow flag (guards and loops).
unsafe impl<T: Send> Send for HostStorage<T> {}
// SAFETY: as for Send, just above.
unsafe impl<T: Send + Sync> Sync for HostStorage<T> {}

impl<T> HostStorage<T> {
    pub(crate) fn new(values: Vec<T>) -> Self {
        let boxed: Box<[T]> = values.into_boxed_slice();
        let len = boxed.len();
        HostStorage {
            data: AtomicPtr::new(Box::into_raw(boxed) as *mut T),
            len: AtomicUsize::new(len),
            capacity: AtomicUsize::new(len),
            flag: BorrowFlag::default(),
            device: DeviceCell::default(),
        }
    }

    /// `values` in a buffer with room for `capacity` values (at least
    /// their number), the rest `fill`.
    pub(crate) fn with_capacity(mut values: Vec<T>, capacity: usize, fill: T) -> Self
    where
        T: Copy,
    {
        let len = values.len();
        if capacity > len && values.try_reserve_exact(capacity - len).is_ok() {
            values.resize(capacity, fill);
        }
        let storage = HostStorage::new(values);
        storage.len.store(len, Ordering::Release);
        storage
    }

    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// Values the buffer holds room for.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Acquire)
    }

    /// Makes room for `len` values, keeping the data. Past the capacity
    /// the buffer is reallocated at twice the capacity (or `len`, if more),
    /// so a population that grows step by step reallocates O(log n) times.
    /// The caller holds the exclusive borrow, so nobody holds a pointer into
    /// the buffer.
    ///
    /// # Errors
    /// [`Error::HostOutOfMemory`] (naming `name`) if the larger buffer cannot
    /// be allocated; nothing changes then.
    pub(crate) fn reserve(&self, name: &str, len: usize, fill: T) -> Result<()>
    where
        T: Copy,
    {
        let (old_len, cap) = (self.len(), self.capacity());
        if len <= cap {
            return Ok(());
        }
        let new_cap = len.max(cap.saturating_mul(2));
        let mut values = crate::host_memory::reserved(name, new_cap)?;
        // SAFETY: the exclusive borrow is held; `old_len <= cap` values are live.
        values.extend_from_slice(unsafe { std::slice::from_raw_parts(self.ptr(), old_len) });
        values.resize(new_cap, fill);
        let old = self
            .data
            .swap(Box::into_raw(values.into_boxed_slice()) as *mut T, Ordering::AcqRel);
        // SAFETY: `old` came from `Box::into_raw` of `cap` values, owned here.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(old, cap)) });
        self.capacity.store(new_cap, Ordering::Release);
        Ok(())
    }

    /// Makes the data `len` values long (at most the capacity; see
    /// [`HostStorage::reserve`]); values past the old length are `fill`. The
    /// host holds the data afterwards: a device buffer is kept for reuse,
    /// its copy stale (a loop replaces it if it is too small). The caller
    /// holds the exclusive borrow.
    pub(crate) fn set_len(&self, len: usize, fill: T)
    where
        T: Copy,
    {
        self.set_host_len(len, fill);
        let mut device = self.device.lock();
        device.state = match device.buffer {
            Some(_) => crate::DeviceState::Host,
            None => crate::DeviceState::DeviceUnallocated,
        };
    }

    /// As [`HostStorage::set_len`], leaving the device side alone: for a
    /// reordering on the device, whose caller holds the device lock and has
    /// put the data, at its new length, in the device buffer.
    pub(crate) fn set_host_len(&self, len: usize, fill: T)
    where
        T: Copy,
    {
        let old_len = self.len();
        assert!(len <= self.capacity(), "set_len past the capacity: reserve first");
        if len > old_len {
            // SAFETY: the exclusive borrow is held and `len <= capacity`.
            unsafe { std::slice::from_raw_parts_mut(self.ptr(), len)[old_len..].fill(fill) };
        }
        self.len.store(len, Ordering::Release);
    }

    /// Exchanges the host buffers and the device buffers and states of two
    /// storages of one length in O(1). The caller holds both exclusive
    /// borrows, so nobody holds a pointer into either buffer; transfer
    /// counters stay with their storage.
    pub(crate) fn swap_contents(&self, other: &HostStorage<T>) {
        // Lengths go with their buffers too: equal for Dats of one set, but
        // a buffer must never be read past its own length whatever happens.
        let my_len = self.len();
        self.len
            .store(other.len.swap(my_len, Ordering::AcqRel), Ordering::Release);
        let mine = self.data.load(Ordering::Acquire);
        let theirs = other.data.swap(mine, Ordering::AcqRel);
        self.data.store(theirs, Ordering::Release);
        // Each buffer keeps its capacity (equal for Dats of one set, but
        // nothing needs that to be so).
        let my_cap = self.capacity();
        self.capacity
            .store(other.capacity.swap(my_cap, Ordering::AcqRel), Ordering::Release);
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
        std::mem::swap(&mut a.layout, &mut b.layout);
    }

    pub(crate) fn flag(&self) -> &BorrowFlag {
        &self.flag
    }

    pub(crate) fn device(&self) -> &DeviceCell {
        &self.device
    }

    /// Size of the host data in bytes.
    pub(crate) fn byte_len(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
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

    /// Brings the host copy up to date for a writer whose exclusive borrow
    /// the caller already holds (a dynamic set's reordering).
    pub(crate) fn sync_host_held(&self, name: &str) -> Result<()> {
        self.sync_host(name, true)
    }

    /// Brings the host copy up to date for a reader whose borrow the
    /// caller already holds (packing agents to move).
    pub(crate) fn sync_host_read_held(&self, name: &str) -> Result<()> {
        self.sync_host(name, false)
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
        // SAFETY: `ptr` came from `Box::into_raw` of a `Box<[T]>` of
        // `capacity` values (swaps exchange capacities with buffers), owned here.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, *self.capacity.get_mut())) });
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
