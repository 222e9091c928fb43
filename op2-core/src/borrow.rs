//! `BorrowFlag`, a thread-safe borrow state like `RefCell`'s: many shared borrows or one
//! exclusive borrow, held in one atomic. Each Dat and Global has one; host accessors and
//! running loops take it, so a loop never runs while the host holds a conflicting
//! reference to its data.
use std::sync::atomic::{AtomicIsize, Ordering};

/// A thread-safe borrow state, like `RefCell`'s: any number of shared borrows or
/// one exclusive borrow. Host accessors and running loops take it, so a loop never
/// runs while the host holds a conflicting reference to its data.
#[derive(Debug, Default)]
pub struct BorrowFlag(AtomicIsize);

const EXCLUSIVE: isize = -1;

impl BorrowFlag {
    /// Takes a shared borrow, or says what is in the way.
    pub fn try_shared(&self) -> Result<(), &'static str> {
        let mut cur = self.0.load(Ordering::Relaxed);
        loop {
            if cur == EXCLUSIVE {
                return Err("mutably borrowed");
            }
            match self
                .0
                .compare_exchange_weak(cur, cur + 1, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(now) => cur = now,
            }
        }
    }

    /// Takes the exclusive borrow, or says what is in the way.
    pub fn try_exclusive(&self) -> Result<(), &'static str> {
        match self
            .0
            .compare_exchange(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => Ok(()),
            Err(EXCLUSIVE) => Err("mutably borrowed"),
            Err(_) => Err("borrowed for reading"),
        }
    }

    /// Gives back a shared borrow taken with [`BorrowFlag::try_shared`].
    pub fn release_shared(&self) {
        self.0.fetch_sub(1, Ordering::Release);
    }

    /// Gives back the exclusive borrow taken with [`BorrowFlag::try_exclusive`].
    pub fn release_exclusive(&self) {
        self.0.store(0, Ordering::Release);
    }

    /// Takes a shared (`exclusive == false`) or exclusive borrow.
    pub fn try_borrow(&self, exclusive: bool) -> Result<(), &'static str> {
        if exclusive {
            self.try_exclusive()
        } else {
            self.try_shared()
        }
    }

    /// Gives back a borrow taken with [`BorrowFlag::try_borrow`].
    pub fn release(&self, exclusive: bool) {
        if exclusive {
            self.release_exclusive()
        } else {
            self.release_shared()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_borrows_stack_and_block_exclusive() {
        let f = BorrowFlag::default();
        f.try_shared().unwrap();
        f.try_shared().unwrap();
        assert_eq!(f.try_exclusive(), Err("borrowed for reading"));
        f.release_shared();
        f.release_shared();
        f.try_exclusive().unwrap();
        assert_eq!(f.try_shared(), Err("mutably borrowed"));
        assert_eq!(f.try_exclusive(), Err("mutably borrowed"));
        f.release_exclusive();
        f.try_shared().unwrap();
    }
}
