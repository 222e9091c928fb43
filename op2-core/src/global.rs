//! `Global<T>`: `dim` values not tied to a set, either a constant a loop reads or a
//! reduction result (INC, MIN, MAX). It is a cheap cloneable handle with guarded host
//! access, like `Dat`. Its `GlobalHandle` impl gives the reduction hooks (start and
//! combine partials, distributed reductions) that `partials.rs` and the backends use.
use std::fmt;
use std::sync::Arc;

use crate::storage::HostStorage;
use crate::{Access, BorrowFlag, Error, GlobalHandle, HostMut, HostRef, Result, Scalar, ScalarType};

/// `dim` values not tied to a set: a constant (READ) or a reduction result
/// (INC, MIN, MAX). A cheap cloneable handle.
pub struct Global<T: Scalar>(Arc<GlobalInner<T>>);

struct GlobalInner<T> {
    name: String,
    host: HostStorage<T>,
    /// The ranks this Global is shared by, if any.
    across: std::sync::Mutex<Option<Arc<dyn crate::AllReduce>>>,
}

impl<T: Scalar> Clone for Global<T> {
    fn clone(&self) -> Self {
        Global(self.0.clone())
    }
}

impl<T: Scalar> Global<T> {
    /// Largest dim op2 supports: generated code indexes components with
    /// 32-bit integers.
    pub const MAX_DIM: usize = i32::MAX as usize;

    /// A Global holding `values` (its dim is their number, 1 to [`Global::MAX_DIM`]).
    ///
    /// # Errors
    /// [`Error::ZeroDim`] if `values` is empty, [`Error::ShapeTooLarge`] if it
    /// holds more than [`Global::MAX_DIM`] values.
    pub fn new(name: impl Into<String>, values: Vec<T>) -> Result<Global<T>> {
        let name = name.into();
        Self::check_dim(&name, values.len())?;
        Ok(Self::build(name, values))
    }

    /// A Global of dim 1. Infallible (there is nothing to check), so it returns
    /// the Global itself.
    pub fn scalar(name: impl Into<String>, value: T) -> Global<T> {
        Self::build(name.into(), vec![value])
    }

    /// A Global of `dim` zeros.
    ///
    /// # Errors
    /// [`Error::ZeroDim`] if `dim` is 0, [`Error::ShapeTooLarge`] if it is
    /// above [`Global::MAX_DIM`], [`Error::HostOutOfMemory`] if host memory
    /// for its values cannot be allocated.
    pub fn zeros(name: impl Into<String>, dim: usize) -> Result<Global<T>> {
        let name = name.into();
        Self::check_dim(&name, dim)?;
        let mut values = crate::host_memory::reserved(&name, dim)?;
        values.resize(dim, T::ZERO);
        Ok(Self::build(name, values))
    }

    fn check_dim(name: &str, dim: usize) -> Result<()> {
        if dim == 0 {
            return Err(Error::ZeroDim { name: name.to_string() });
        }
        if dim > Self::MAX_DIM {
            return Err(Error::ShapeTooLarge {
                kind: "global",
                name: name.to_string(),
                quantity: "dim",
                value: dim,
                max: Self::MAX_DIM,
            });
        }
        Ok(())
    }

    fn build(name: String, values: Vec<T>) -> Global<T> {
        Global(Arc::new(GlobalInner {
            name,
            host: HostStorage::new(values),
            across: std::sync::Mutex::new(None),
        }))
    }

    /// Shares this Global among the ranks of `ranks` (`None`: this
    /// process's alone again): every loop over a set that is not itself
    /// distributed and reduces into it (INC, MIN, MAX) then combines the
    /// ranks' contributions, so that each rank holds what one process
    /// looping over all their elements would (sums up to rounding). Such
    /// loops become collective: every rank must run each of them, in the
    /// same order (an empty set or subset included). Loops over a
    /// distributed set reduce across its ranks anyway. E.g. an agent
    /// model's macro properties, when its agents are shared among ranks.
    pub fn reduce_across(&self, ranks: Option<Arc<dyn crate::AllReduce>>) {
        *self.0.across.lock().unwrap_or_else(|e| e.into_inner()) = ranks;
    }

    /// The Global's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Number of values.
    pub fn dim(&self) -> usize {
        self.0.host.len()
    }

    /// Read access to the values.
    ///
    /// # Panics
    /// If a `data_mut()` guard is alive; see [`Global::try_data_ro`].
    pub fn data_ro(&self) -> HostRef<'_, T> {
        self.try_data_ro().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Read access, or an error if mutably borrowed.
    pub fn try_data_ro(&self) -> Result<HostRef<'_, T>> {
        self.0.host.try_read(&self.0.name)
    }

    /// Write access to the values.
    ///
    /// # Panics
    /// If any other guard is alive; see [`Global::try_data_mut`].
    pub fn data_mut(&self) -> HostMut<'_, T> {
        self.try_data_mut().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Write access, or an error if borrowed.
    pub fn try_data_mut(&self) -> Result<HostMut<'_, T>> {
        self.0.host.try_write(&self.0.name)
    }

    /// The first value (the value of a dim-1 Global).
    pub fn value(&self) -> T {
        self.data_ro()[0]
    }

    /// Sets every value to `value` (e.g. resetting a reduction to zero).
    /// A value a device loop left on the device is dropped, not downloaded;
    /// where the Global has a device copy, it is filled there too, in order
    /// with the device's work, so that the next loop uploads nothing.
    ///
    /// # Panics
    /// If a guard is alive; see [`Global::try_fill`].
    pub fn fill(&self, value: T) {
        self.try_fill(value).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Sets every value to `value`, or an error if borrowed. A device that
    /// fails to fill (an error left by earlier queued work, say) only makes
    /// the device copy stale: the host holds the value, and the next loop
    /// uploads it and reports the device's error.
    pub fn try_fill(&self, value: T) -> Result<()> {
        let mut host = self.0.host.try_write_borrow(&self.0.name)?;
        host.fill(value);
        let pattern = bytemuck::bytes_of(&value);
        let mut slot = self.0.host.device().lock();
        let bytes = self.0.host.byte_len();
        let filled = match &slot.buffer {
            Some(b) if b.bytes() >= bytes => b.fill(pattern, bytes),
            _ => Ok(false),
        };
        match filled {
            Ok(true) => slot.state = crate::DeviceState::Both,
            Ok(false) => slot.overwrite_host(),
            Err(e) => {
                tracing::warn!(global = %self.0.name, error = %e, "device fill failed: the next loop uploads");
                slot.overwrite_host();
            }
        }
        Ok(())
    }

    /// How often this Global has moved between host and device: uploads
    /// before loops, downloads when the host reads a value a device loop
    /// left (device fills are not transfers).
    pub fn transfer_stats(&self) -> crate::TransferStats {
        self.0.host.device().stats()
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: read while the runtime holds the borrow; T is plain data.
        unsafe { std::slice::from_raw_parts(self.0.host.ptr() as *const u8, self.0.host.byte_len()) }
    }

    /// Raw pointer to the values, for the views generated code builds.
    #[doc(hidden)]
    pub fn host_ptr(&self) -> *mut T {
        self.0.host.ptr()
    }
}

impl<T: Scalar> GlobalHandle for Global<T> {
    fn name(&self) -> &str {
        &self.0.name
    }
    fn dim(&self) -> usize {
        self.0.host.len()
    }
    fn scalar(&self) -> ScalarType {
        T::TYPE
    }
    fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as *const u8 as usize
    }
    fn borrow_flag(&self) -> &BorrowFlag {
        self.0.host.flag()
    }

    fn init_partial(&self, access: Access, slot: &mut [u64]) {
        let dst = slot.as_mut_ptr() as *mut T;
        let dim = self.dim();
        // A public trait: a slot too small must not be written past.
        assert!(
            std::mem::size_of_val(slot) >= self.byte_len(),
            "a partial slot too small for `{}`",
            self.name()
        );
        let src = self.0.host.ptr();
        for k in 0..dim {
            // SAFETY: the slot holds `dim` values of T (ReductionLayout sizes it);
            // the caller holds this Global's borrow.
            unsafe {
                *dst.add(k) = match access {
                    Access::Inc => T::ZERO,
                    _ => *src.add(k),
                };
            }
        }
    }

    fn host_bytes(&self) -> *mut u8 {
        self.0.host.ptr() as *mut u8
    }
    fn across_ranks(&self) -> Option<Arc<dyn crate::AllReduce>> {
        self.0.across.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    fn begin_distributed_reduction(&self, access: Access) -> Vec<u8> {
        let bytes = self.bytes().to_vec();
        if access == Access::Inc {
            // SAFETY: the runtime holds this Global's exclusive borrow.
            unsafe { std::slice::from_raw_parts_mut(self.0.host.ptr(), self.dim()).fill(T::ZERO) };
        }
        bytes
    }
    fn end_distributed_reduction(
        &self,
        access: Access,
        saved: &[u8],
        all_reduce: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        assert!(
            saved.len() >= self.byte_len(),
            "saved values too short for `{}`",
            self.name()
        );
        // SAFETY: as above.
        let values = unsafe { std::slice::from_raw_parts_mut(self.0.host.ptr(), self.dim()) };
        // SAFETY: T is a plain scalar: any bytes of the right length are valid.
        let bytes = unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr() as *mut u8, self.byte_len()) };
        all_reduce(bytes)?;
        if access == Access::Inc {
            let before = saved.as_ptr() as *const T;
            for (k, v) in values.iter_mut().enumerate() {
                // SAFETY: `saved` came from `begin_distributed_reduction` (dim values).
                *v = unsafe { std::ptr::read_unaligned(before.add(k)) } + *v;
            }
        }
        Ok(())
    }
    fn restore(&self, saved: &[u8]) {
        assert_eq!(
            saved.len(),
            self.byte_len(),
            "saved values of another size for `{}`",
            self.name()
        );
        // SAFETY: the runtime holds the exclusive borrow; `saved` has byte_len bytes.
        unsafe { std::ptr::copy_nonoverlapping(saved.as_ptr(), self.0.host.ptr() as *mut u8, self.byte_len()) }
    }
    fn byte_len(&self) -> usize {
        self.0.host.byte_len()
    }
    fn device(&self) -> &crate::DeviceCell {
        self.0.host.device()
    }

    fn combine_partial(&self, access: Access, slot: &[u64]) {
        assert!(
            std::mem::size_of_val(slot) >= self.byte_len(),
            "a partial slot too small for `{}`",
            self.name()
        );
        let part = slot.as_ptr() as *const T;
        let dst = self.0.host.ptr();
        for k in 0..self.dim() {
            // SAFETY: as in `init_partial`; the caller holds the exclusive borrow.
            unsafe {
                let p = *part.add(k);
                let d = dst.add(k);
                *d = match access {
                    Access::Inc => *d + p,
                    Access::Min => (*d).min_of(p),
                    Access::Max => (*d).max_of(p),
                    _ => *d,
                };
            }
        }
    }
}

impl<T: Scalar> fmt::Debug for Global<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Global<{}>({:?}, dim {})",
            T::TYPE.rust_name(),
            self.name(),
            self.dim()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fill while the values are borrowed is an error that changes
    /// nothing; once released, it sets every value.
    #[test]
    fn a_fill_of_a_borrowed_global_is_an_error() {
        let g = Global::new("g", vec![1.0f64, 2.0]).unwrap();
        {
            let _read = g.data_ro();
            let e = g.try_fill(5.0).unwrap_err();
            assert!(matches!(&e, Error::HostBorrow { name, .. } if name == "g"), "{e}");
        }
        assert_eq!(g.data_ro().to_vec(), [1.0, 2.0], "nothing written");
        g.try_fill(5.0).unwrap();
        assert_eq!(g.data_ro().to_vec(), [5.0, 5.0]);
    }

    /// The reduction hooks are a public trait: a slot or saved copy of the
    /// wrong size stops them instead of writing past it.
    #[test]
    fn reduction_hooks_check_their_buffers() {
        let g = Global::new("g", vec![1.0f64, 2.0, 3.0]).unwrap();
        let mut slot = [0u64; 3];
        g.init_partial(Access::Inc, &mut slot);
        g.combine_partial(Access::Inc, &slot);
        assert_eq!(g.data_ro().to_vec(), [1.0, 2.0, 3.0]);
        let short = std::panic::catch_unwind(|| g.init_partial(Access::Inc, &mut [0u64; 2]));
        assert!(short.is_err(), "a slot of 2 words for 3 values");
        assert!(std::panic::catch_unwind(|| g.combine_partial(Access::Max, &[0u64; 1])).is_err());
        assert!(std::panic::catch_unwind(|| g.restore(&[0u8; 23])).is_err());
        assert_eq!(g.data_ro().to_vec(), [1.0, 2.0, 3.0], "nothing written");
    }

    #[test]
    fn constructors() {
        let g = Global::new("qinf", vec![1.0, 2.0, 0.0, 3.0]).unwrap();
        assert_eq!(g.dim(), 4);
        assert_eq!(g.data_ro()[3], 3.0);
        assert_eq!(Global::scalar("gam", 1.4f64).value(), 1.4);
        assert_eq!(Global::<i32>::zeros("n", 2).unwrap().data_ro().to_vec(), vec![0, 0]);
        let e = Global::<f64>::new("empty", vec![]).unwrap_err();
        assert!(matches!(e, Error::ZeroDim { .. }));
        assert!(e.to_string().contains("empty"));
    }

    #[test]
    fn huge_dims_are_errors() {
        for dim in [Global::<f64>::MAX_DIM + 1, usize::MAX / 2 + 1, usize::MAX] {
            let e = Global::<f64>::zeros("g", dim).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::ShapeTooLarge {
                        kind: "global",
                        quantity: "dim",
                        ..
                    }
                ),
                "{e:?}"
            );
            assert!(e.to_string().contains("`g`"), "{e}");
        }
        assert!(matches!(Global::<f64>::zeros("g", 0), Err(Error::ZeroDim { .. })));
        assert_eq!(Global::<u32>::zeros("g", 3).unwrap().dim(), 3);
        let msg = Global::<f64>::zeros("z", usize::MAX).unwrap_err().to_string();
        assert!(msg.contains("`z`") && msg.contains("maximum"), "{msg}");
    }

    #[test]
    fn partials_start_from_identity_or_value_and_combine() {
        let g = Global::new("g", vec![5i64, -5]).unwrap();
        let mut slot = [0u64; 2];
        g.init_partial(Access::Inc, &mut slot);
        assert_eq!(slot, [0, 0]);
        g.init_partial(Access::Min, &mut slot);
        // SAFETY: two u64 slots hold two i64 of the same size and alignment.
        let vals = unsafe { std::slice::from_raw_parts(slot.as_ptr() as *const i64, 2) };
        assert_eq!(vals, &[5, -5]);
        let p: [i64; 2] = [3, 10];
        let mut buf = [0u64; 2];
        // SAFETY: as above, two i64 into two u64 slots of the same size.
        unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), buf.as_mut_ptr() as *mut i64, 2) };
        g.combine_partial(Access::Min, &buf);
        assert_eq!(g.data_ro().to_vec(), vec![3, -5]);
        g.combine_partial(Access::Max, &buf);
        assert_eq!(g.data_ro().to_vec(), vec![3, 10]);
        g.combine_partial(Access::Inc, &buf);
        assert_eq!(g.data_ro().to_vec(), vec![6, 20]);
    }
}
