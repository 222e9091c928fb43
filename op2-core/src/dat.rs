//! `Dat<T>`: `dim` values of type `T` per element of a `Set`, held in a cheap cloneable
//! handle whose clones share the data. It checks its shape when built, gives guarded host
//! access (`data_ro`, `data_mut`), swaps buffers for double buffering, and registers with
//! a dynamic set's population so births and deaths resize it. Loops see it through the
//! type-erased `DatHandle` of `arg.rs`; its values live in `storage.rs`'s `HostStorage`.
use std::fmt;
use std::sync::Arc;

use crate::storage::HostStorage;
pub use crate::storage::{HostMut, HostRef};
use crate::{BorrowFlag, DatHandle, Error, Result, Scalar, ScalarType, Set};

/// `dim` values of type `T` per element of a set, element-major
/// (`[e0c0, e0c1, e1c0, ...]`). A cheap cloneable handle: clones share the data.
pub struct Dat<T: Scalar>(Arc<DatInner<T>>);

struct DatInner<T> {
    name: String,
    set: Set,
    dim: usize,
    host: HostStorage<T>,
    halo: crate::HaloState,
}

impl<T: Scalar> Clone for Dat<T> {
    fn clone(&self) -> Self {
        Dat(self.0.clone())
    }
}

impl<T: Scalar> Dat<T> {
    /// Largest dim op2 supports: generated code indexes components with
    /// 32-bit integers.
    pub const MAX_DIM: usize = i32::MAX as usize;

    /// A Dat from initial values: `set.total_size() * dim` of them.
    ///
    /// # Errors
    /// [`Error::ZeroDim`] if `dim` is 0, [`Error::ShapeTooLarge`] if it is
    /// above [`Dat::MAX_DIM`], [`Error::SizeOverflow`] if the number of values
    /// or their size in bytes overflows, [`Error::DatLength`] if `values` has
    /// another length, [`Error::SetInUse`] if `set` is dynamic and changing
    /// size right now (births and deaths on another thread).
    pub fn from_vec(name: impl Into<String>, set: &Set, dim: usize, values: Vec<T>) -> Result<Dat<T>> {
        let name = name.into();
        // A dynamic set holds still until the Dat is registered with it.
        let _still = SetStill::hold(set)?;
        let expected = Self::checked_len(&name, set, dim)?;
        if values.len() != expected {
            return Err(Error::DatLength {
                dat: name,
                set: set.name().to_string(),
                set_size: set.total_size(),
                dim,
                expected,
                found: values.len(),
            });
        }
        Ok(Self::build(name, set, dim, values))
    }

    /// A Dat with every value `value`.
    ///
    /// # Errors
    /// [`Error::ZeroDim`] if `dim` is 0, [`Error::ShapeTooLarge`] if it is
    /// above [`Dat::MAX_DIM`], [`Error::SizeOverflow`] if `set.total_size() * dim`
    /// values (or their bytes) overflow, [`Error::HostOutOfMemory`] if host
    /// memory for them cannot be allocated, [`Error::SetInUse`] as for
    /// [`Dat::from_vec`].
    pub fn filled(name: impl Into<String>, set: &Set, dim: usize, value: T) -> Result<Dat<T>> {
        let name = name.into();
        let _still = SetStill::hold(set)?;
        let len = Self::checked_len(&name, set, dim)?;
        let mut values = crate::host_memory::reserved(&name, len)?;
        values.resize(len, value);
        Ok(Self::build(name, set, dim, values))
    }

    /// A Dat of zeros. Its memory comes zeroed from the system (`calloc`),
    /// so pages never written take no physical memory: a Dat on a huge set
    /// ([`Set::new_long`]) costs only what its loops touch.
    ///
    /// # Errors
    /// As [`Dat::filled`].
    pub fn zeros(name: impl Into<String>, set: &Set, dim: usize) -> Result<Dat<T>> {
        let name = name.into();
        let _still = SetStill::hold(set)?;
        let len = Self::checked_len(&name, set, dim)?;
        let Some(values) = zeroed_vec::<T>(len) else {
            return Err(Error::HostOutOfMemory {
                name,
                bytes: len * std::mem::size_of::<T>(),
            });
        };
        Ok(Self::build(name, set, dim, values))
    }

    /// The number of values of a Dat of `dim` on `set`, checked: `dim` in
    /// `1..=MAX_DIM`, and the count and its size in bytes within `isize::MAX`
    /// (the most one allocation can hold).
    fn checked_len(name: &str, set: &Set, dim: usize) -> Result<usize> {
        if dim == 0 {
            return Err(Error::ZeroDim { name: name.to_string() });
        }
        if dim > Self::MAX_DIM {
            return Err(Error::ShapeTooLarge {
                kind: "dat",
                name: name.to_string(),
                quantity: "dim",
                value: dim,
                max: Self::MAX_DIM,
            });
        }
        let n = set.total_size();
        let overflow = |quantity, expression| Error::SizeOverflow {
            kind: "dat",
            name: name.to_string(),
            quantity,
            expression,
        };
        let len = n.checked_mul(dim).ok_or_else(|| {
            overflow(
                "number of values",
                format!("{n} elements of set `{}` x dim {dim}", set.name()),
            )
        })?;
        let size = std::mem::size_of::<T>();
        match len.checked_mul(size) {
            Some(bytes) if bytes <= isize::MAX as usize => Ok(len),
            _ => Err(overflow(
                "size in bytes",
                format!(
                    "{n} elements of set `{}` x dim {dim} x {size} bytes of {}, limit isize::MAX",
                    set.name(),
                    T::TYPE.rust_name()
                ),
            )),
        }
    }

    fn build(name: String, set: &Set, dim: usize, values: Vec<T>) -> Dat<T> {
        let host = match set.population() {
            // Room for the population's capacity (the count fits: a set's
            // size times dim was checked, and capacity is a hint).
            Some(p) => HostStorage::with_capacity(values, p.capacity().saturating_mul(dim), T::ZERO),
            None => HostStorage::new(values),
        };
        let dat = Dat(Arc::new(DatInner {
            name,
            set: set.clone(),
            dim,
            host,
            halo: crate::HaloState::default(),
        }));
        if let Some(p) = set.population() {
            // Weak: the set must not keep its Dats alive (they hold the set).
            let weak: std::sync::Weak<DatInner<T>> = Arc::downgrade(&dat.0);
            p.register(weak);
        }
        dat
    }

    /// The Dat's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The set it lives on.
    pub fn set(&self) -> &Set {
        &self.0.set
    }

    /// Values per element.
    pub fn dim(&self) -> usize {
        self.0.dim
    }

    /// Read access to the host values. Leaves the halo of a distributed Dat
    /// as it is.
    ///
    /// # Panics
    /// If a `data_mut()` guard of this Dat is alive (as `RefCell::borrow` does);
    /// [`Dat::try_data_ro`] returns an error instead.
    pub fn data_ro(&self) -> HostRef<'_, T> {
        self.try_data_ro().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Read access, or an error if the data is mutably borrowed.
    pub fn try_data_ro(&self) -> Result<HostRef<'_, T>> {
        self.0.host.try_read(&self.0.name)
    }

    /// Write access to the host values.
    ///
    /// On a distributed set this marks the Dat's halo stale, as a loop that
    /// writes the Dat does: the next loop that reads halo values exchanges them
    /// first, so owned values changed here reach the ranks that hold copies
    /// (and halo values written here are overwritten by their owners' values).
    ///
    /// # Panics
    /// If any other guard of this Dat is alive; [`Dat::try_data_mut`] returns an
    /// error instead.
    pub fn data_mut(&self) -> HostMut<'_, T> {
        self.try_data_mut().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Write access, or an error if the data is borrowed. Marks the halo
    /// stale as [`Dat::data_mut`] does (only when access is granted).
    pub fn try_data_mut(&self) -> Result<HostMut<'_, T>> {
        let guard = self.0.host.try_write(&self.0.name)?;
        // No loop can exchange the halo while the guard holds the exclusive
        // borrow, so marking it now covers every write made through the guard.
        self.0.halo.mark_stale();
        Ok(guard)
    }

    /// Exchanges the values of two Dats of one Set and dim in O(1), for
    /// double buffering: a step reads the current state and writes the next
    /// one, then swaps them. Host buffers, device buffers, their device states
    /// and halo staleness move with the values; names, identities (and so the
    /// handles held elsewhere) and transfer counters stay. Swapping a Dat with
    /// itself (or a clone of its handle) changes nothing.
    ///
    /// # Errors
    /// [`Error::SwapMismatch`] if the Dats are on different Sets or have
    /// different dims; [`Error::HostBorrow`] if either is borrowed (a
    /// `data_ro()`/`data_mut()` guard or a running loop).
    pub fn swap(&self, other: &Dat<T>) -> Result<()> {
        if self.same(other) {
            return Ok(());
        }
        let mismatch = |reason: String| Error::SwapMismatch {
            first: self.name().to_string(),
            second: other.name().to_string(),
            reason,
        };
        if !self.set().same(other.set()) {
            return Err(mismatch(format!(
                "they are on different sets (`{}` and `{}`)",
                self.set().name(),
                other.set().name()
            )));
        }
        if self.dim() != other.dim() {
            return Err(mismatch(format!(
                "their dims differ ({} and {})",
                self.dim(),
                other.dim()
            )));
        }
        let mine = self.0.host.try_write_borrow(&self.0.name)?;
        let theirs = other.0.host.try_write_borrow(&other.0.name)?;
        self.0.host.swap_contents(&other.0.host);
        self.0.halo.swap_staleness(&other.0.halo);
        drop((mine, theirs));
        Ok(())
    }

    /// A copy of the host values.
    pub fn to_vec(&self) -> Vec<T> {
        self.data_ro().to_vec()
    }

    /// Whether two handles share data.
    pub fn same(&self, other: &Dat<T>) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// How many halo exchanges this Dat has had (distributed runs).
    pub fn halo_exchanges(&self) -> u64 {
        self.0.halo.exchanges()
    }

    /// Asks for this Dat's values to lie in device memory as `layout` says
    /// (by default [`DeviceLayout::Auto`](crate::DeviceLayout::Auto), the
    /// runtime's choice). Kernels and the host see the same values either
    /// way; a device copy in another layout is brought to the new one at
    /// the Dat's next device loop, through the host.
    pub fn set_device_layout(&self, layout: crate::DeviceLayout) {
        self.0.host.device().lock().requested = layout;
    }

    /// The layout asked for with [`Dat::set_device_layout`].
    pub fn device_layout(&self) -> crate::DeviceLayout {
        self.0.host.device().lock().requested
    }

    /// How often this data has moved between host and device.
    pub fn transfer_stats(&self) -> crate::TransferStats {
        self.0.host.device().stats()
    }

    /// Raw pointer to the host values, for the views generated code builds.
    /// Dereferencing it is only sound while a loop holds this Dat's borrow.
    #[doc(hidden)]
    pub fn host_ptr(&self) -> *mut T {
        self.0.host.ptr()
    }
}

/// Holds a dynamic set still (no births or deaths) while a Dat is made on
/// it, so that its length and its registration agree.
struct SetStill<'a>(Option<&'a Set>);

impl<'a> SetStill<'a> {
    fn hold(set: &'a Set) -> Result<SetStill<'a>> {
        Ok(SetStill(set.try_use()?.then_some(set)))
    }
}

impl Drop for SetStill<'_> {
    fn drop(&mut self) {
        if let Some(set) = self.0 {
            set.release_use();
        }
    }
}

impl<T: Scalar> crate::population::Member for DatInner<T> {
    fn member_id(&self) -> usize {
        self as *const DatInner<T> as *const u8 as usize
    }
    fn member_name(&self) -> &str {
        &self.name
    }
    fn member_flag(&self) -> &BorrowFlag {
        self.host.flag()
    }
    fn sync_host(&self) -> Result<()> {
        self.host.sync_host_held(&self.name)
    }
    fn sync_host_read(&self) -> Result<()> {
        self.host.sync_host_read_held(&self.name)
    }
    fn element_bytes(&self) -> usize {
        self.dim * std::mem::size_of::<T>()
    }
    fn host_bytes(&self) -> *mut u8 {
        self.host.ptr() as *mut u8
    }
    fn reserve_elements(&self, elements: usize) -> Result<()> {
        self.host
            .reserve(&self.name, elements.saturating_mul(self.dim), T::ZERO)
    }
    fn set_elements(&self, elements: usize) {
        self.host.set_len(elements * self.dim, T::ZERO)
    }
    fn set_host_elements(&self, elements: usize) {
        self.host.set_host_len(elements * self.dim, T::ZERO)
    }
    fn member_device(&self) -> &crate::DeviceCell {
        self.host.device()
    }
    fn member_scalar(&self) -> ScalarType {
        T::TYPE
    }
}

impl<T: Scalar> DatHandle for Dat<T> {
    fn name(&self) -> &str {
        &self.0.name
    }
    fn set(&self) -> &Set {
        &self.0.set
    }
    fn dim(&self) -> usize {
        self.0.dim
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
    fn host_bytes(&self) -> *mut u8 {
        self.0.host.ptr() as *mut u8
    }
    fn byte_len(&self) -> usize {
        self.0.host.byte_len()
    }
    fn device(&self) -> &crate::DeviceCell {
        self.0.host.device()
    }
    fn halo(&self) -> &crate::HaloState {
        &self.0.halo
    }
}

impl<T: Scalar> fmt::Debug for Dat<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Dat<{}>({:?} on {:?}, dim {})",
            T::TYPE.rust_name(),
            self.name(),
            self.set().name(),
            self.dim()
        )
    }
}

/// `len` zeros, allocated zeroed (pages the system has not yet given are
/// not touched), or `None` if the memory cannot be had. `len` times the
/// value size was checked to fit `isize::MAX` bytes.
fn zeroed_vec<T: Scalar>(len: usize) -> Option<Vec<T>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(len).ok()?;
    // SAFETY: the layout has a non-zero size (len > 0, and no Scalar is
    // zero-sized).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of
    // `len` values of T, all initialised: every Scalar is `Pod`, whose
    // all-zero bytes are a value (its ZERO).
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_vec_checks_length_and_names_the_dat() {
        let s = Set::new("nodes", 3).unwrap();
        let d = Dat::from_vec("x", &s, 2, vec![0.0f64; 6]).unwrap();
        assert_eq!(d.dim(), 2);
        assert_eq!(d.data_ro().len(), 6);
        let e = Dat::from_vec("x", &s, 2, vec![0.0f64; 5]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::DatLength {
                    expected: 6,
                    found: 5,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("`x`") && e.to_string().contains("nodes"));
    }

    #[test]
    fn zero_dim_is_an_error() {
        let s = Set::new("nodes", 3).unwrap();
        let e = Dat::<i32>::from_vec("bad", &s, 0, vec![]).unwrap_err();
        assert!(matches!(e, Error::ZeroDim { .. }));
        assert!(e.to_string().contains("bad"));
    }

    #[test]
    fn overflowing_sizes_are_errors_naming_the_dat() {
        let s = Set::new("nodes", 2).unwrap();
        // Unchecked, 2 * (usize::MAX / 2 + 1) wrapped to 0 and took an empty
        // table; now a dim above MAX_DIM is refused before any product.
        let huge = usize::MAX / 2 + 1;
        for dim in [huge, usize::MAX, Dat::<f64>::MAX_DIM + 1] {
            let e = Dat::<f64>::from_vec("big", &s, dim, vec![]).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::ShapeTooLarge {
                        kind: "dat",
                        quantity: "dim",
                        ..
                    }
                ),
                "{e:?}"
            );
            assert!(e.to_string().contains("`big`"), "{e}");
            assert!(Dat::<f64>::zeros("big", &s, dim).is_err());
        }
        // A dim within bounds on a set so large that the values overflow.
        let wide = Set::new("wide", crate::set::MAX_SET_SIZE).unwrap();
        let e = Dat::<f64>::from_vec("q", &wide, Dat::<f64>::MAX_DIM, vec![]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::SizeOverflow {
                    kind: "dat",
                    quantity: "size in bytes",
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("`q`") && msg.contains("wide") && msg.contains("overflows"),
            "{msg}"
        );
        let e = Dat::<f64>::filled("q", &wide, Dat::<f64>::MAX_DIM, 1.0).unwrap_err();
        assert!(matches!(e, Error::SizeOverflow { .. }), "{e:?}");
    }

    #[test]
    fn allocation_failure_is_an_error() {
        let wide = Set::new("wide", crate::set::MAX_SET_SIZE).unwrap();
        // 2^31 elements x 2^24 x 8 bytes: 2^58 bytes, representable, never allocatable.
        let e = Dat::<f64>::zeros("vast", &wide, 1 << 24).unwrap_err();
        assert!(matches!(e, Error::HostOutOfMemory { .. }), "{e:?}");
        assert!(e.to_string().contains("`vast`"), "{e}");
    }

    #[test]
    fn zeros_and_filled_return_the_error() {
        let s = Set::new("nodes", 3).unwrap();
        for e in [
            Dat::<i32>::zeros("z", &s, 0).unwrap_err(),
            Dat::<i32>::filled("z", &s, 0, 7).unwrap_err(),
        ] {
            assert!(matches!(e, Error::ZeroDim { .. }), "{e:?}");
            let msg = e.to_string();
            assert!(msg.contains("`z`") && msg.contains("dim must be at least 1"), "{msg}");
        }
    }

    #[test]
    fn host_writes_mark_the_halo_stale_reads_do_not() {
        let s = Set::new("nodes", 3).unwrap();
        let d = Dat::<f64>::zeros("h", &s, 1).unwrap();
        assert!(!d.halo().is_stale());
        drop(d.data_ro());
        let _ = d.to_vec();
        assert!(!d.halo().is_stale(), "reads leave the halo current");
        {
            let _r = d.data_ro();
            assert!(d.try_data_mut().is_err());
            assert!(!d.halo().is_stale(), "a refused write marks nothing");
        }
        d.data_mut()[0] = 1.0;
        assert!(d.halo().is_stale(), "a host write makes the halo stale");
        d.halo().mark_fresh();
        assert!(d.try_data_mut().is_ok());
        assert!(d.halo().is_stale());
    }

    #[test]
    fn clones_share_data() {
        let s = Set::new("cells", 2).unwrap();
        let a = Dat::<u32>::zeros("a", &s, 1).unwrap();
        let b = a.clone();
        b.data_mut()[1] = 7;
        assert_eq!(a.to_vec(), vec![0, 7]);
        assert!(a.same(&b));
    }

    #[test]
    fn every_scalar_type_works() {
        let s = Set::new("s", 2).unwrap();
        assert_eq!(Dat::<f64>::filled("a", &s, 2, 1.5).unwrap().to_vec(), vec![1.5; 4]);
        assert_eq!(Dat::<f32>::filled("b", &s, 1, 2.5).unwrap().to_vec(), vec![2.5; 2]);
        assert_eq!(Dat::<i32>::filled("c", &s, 3, -1).unwrap().to_vec(), vec![-1; 6]);
        assert_eq!(
            Dat::<i64>::filled("d", &s, 1, 1 << 40).unwrap().to_vec(),
            vec![1 << 40; 2]
        );
        assert_eq!(Dat::<u32>::filled("e", &s, 1, 9).unwrap().to_vec(), vec![9; 2]);
    }

    #[test]
    fn conflicting_host_borrows_are_errors() {
        let s = Set::new("s", 2).unwrap();
        let d = Dat::<f64>::zeros("q", &s, 1).unwrap();
        {
            let _w = d.data_mut();
            let e = d.try_data_ro().unwrap_err();
            assert!(matches!(e, Error::HostBorrow { .. }));
            assert!(e.to_string().contains("q"));
        }
        let r1 = d.data_ro();
        let r2 = d.data_ro();
        assert!(d.try_data_mut().is_err());
        drop((r1, r2));
        assert!(d.try_data_mut().is_ok());
    }

    #[test]
    fn swap_exchanges_values_and_halo_staleness_but_not_names() {
        let s = Set::new("s", 3).unwrap();
        let cur = Dat::from_vec("cur", &s, 2, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let next = Dat::<f64>::filled("next", &s, 2, 9.0).unwrap();
        let alias = cur.clone();
        next.0.halo.mark_stale();
        cur.swap(&next).unwrap();
        assert_eq!(cur.to_vec(), vec![9.0; 6]);
        assert_eq!(alias.to_vec(), vec![9.0; 6], "every handle sees the swap");
        assert_eq!(next.to_vec(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!((cur.name(), next.name()), ("cur", "next"));
        assert!(cur.0.halo.is_stale() && !next.0.halo.is_stale());
        // Writes after the swap land in the swapped buffers.
        cur.data_mut()[0] = -1.0;
        next.swap(&cur).unwrap();
        assert_eq!(next.to_vec()[0], -1.0);
        cur.swap(&alias).unwrap();
        assert_eq!(
            cur.to_vec(),
            vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "a swap with itself is a no-op"
        );
    }

    #[test]
    fn swap_refuses_other_shapes_and_borrowed_dats() {
        let s = Set::new("s", 3).unwrap();
        let t = Set::new("t", 3).unwrap();
        let a = Dat::<f64>::zeros("a", &s, 1).unwrap();
        let e = a.swap(&Dat::zeros("other_set", &t, 1).unwrap()).unwrap_err();
        assert!(
            matches!(e, Error::SwapMismatch { .. }) && e.to_string().contains("different sets"),
            "{e}"
        );
        let e = a.swap(&Dat::zeros("wide", &s, 2).unwrap()).unwrap_err();
        assert!(e.to_string().contains("dims differ (1 and 2)"), "{e}");
        let b = Dat::<f64>::filled("b", &s, 1, 1.0).unwrap();
        {
            let _r = b.data_ro();
            let e = a.swap(&b).unwrap_err();
            assert!(
                matches!(e, Error::HostBorrow { .. }) && e.to_string().contains("`b`"),
                "{e}"
            );
        }
        assert_eq!(a.to_vec(), vec![0.0; 3], "a refused swap changes nothing");
        assert!(a.try_data_mut().is_ok(), "a refused swap gives its borrows back");
        a.swap(&b).unwrap();
        assert_eq!(a.to_vec(), vec![1.0; 3]);
    }
}
