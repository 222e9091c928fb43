use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::device::DeviceCell;
use crate::{BorrowFlag, Error, Result};

/// Host memory of a Dat or Global: a fixed-length buffer plus a borrow flag.
///
/// The buffer never moves or changes length, so loops can work on raw pointers
/// to it while they hold the borrow flag.
pub(crate) struct HostStorage<T> {
    data: Box<[UnsafeCell<T>]>,
    flag: BorrowFlag,
    device: DeviceCell,
}

// SAFETY: every access to `data` goes through the borrow flag (guards and loops).
unsafe impl<T: Send> Send for HostStorage<T> {}
unsafe impl<T: Send + Sync> Sync for HostStorage<T> {}

impl<T> HostStorage<T> {
    pub(crate) fn new(values: Vec<T>) -> Self {
        HostStorage {
            data: values.into_iter().map(UnsafeCell::new).collect(),
            flag: BorrowFlag::default(),
            device: DeviceCell::default(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    pub(crate) fn flag(&self) -> &BorrowFlag {
        &self.flag
    }

    pub(crate) fn device(&self) -> &DeviceCell {
        &self.device
    }

    /// Size of the host data in bytes.
    pub(crate) fn byte_len(&self) -> usize {
        std::mem::size_of_val(&*self.data)
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
        UnsafeCell::raw_get(self.data.as_ptr())
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
