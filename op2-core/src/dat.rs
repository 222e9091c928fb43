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
    /// A Dat from initial values: `set.total_size() * dim` of them.
    pub fn from_vec(name: impl Into<String>, set: &Set, dim: usize, values: Vec<T>) -> Result<Dat<T>> {
        let name = name.into();
        if dim == 0 {
            return Err(Error::ZeroDim { name });
        }
        let expected = set.total_size() * dim;
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
        Ok(Dat(Arc::new(DatInner {
            name,
            set: set.clone(),
            dim,
            host: HostStorage::new(values),
            halo: crate::HaloState::default(),
        })))
    }

    /// A Dat with every value `value`.
    ///
    /// # Panics
    /// If `dim` is 0.
    pub fn filled(name: impl Into<String>, set: &Set, dim: usize, value: T) -> Dat<T> {
        let name = name.into();
        assert!(dim > 0, "dat `{name}`: dim must be at least 1");
        let values = vec![value; set.total_size() * dim];
        match Dat::from_vec(name, set, dim, values) {
            Ok(d) => d,
            Err(e) => unreachable!("{e}"),
        }
    }

    /// A Dat of zeros.
    ///
    /// # Panics
    /// If `dim` is 0.
    pub fn zeros(name: impl Into<String>, set: &Set, dim: usize) -> Dat<T> {
        Dat::filled(name, set, dim, T::ZERO)
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

    /// Read access to the host values.
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
    /// # Panics
    /// If any other guard of this Dat is alive; [`Dat::try_data_mut`] returns an
    /// error instead.
    pub fn data_mut(&self) -> HostMut<'_, T> {
        self.try_data_mut().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Write access, or an error if the data is borrowed.
    pub fn try_data_mut(&self) -> Result<HostMut<'_, T>> {
        self.0.host.try_write(&self.0.name)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_vec_checks_length_and_names_the_dat() {
        let s = Set::new("nodes", 3);
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
        let s = Set::new("nodes", 3);
        let e = Dat::<i32>::from_vec("bad", &s, 0, vec![]).unwrap_err();
        assert!(matches!(e, Error::ZeroDim { .. }));
        assert!(e.to_string().contains("bad"));
    }

    #[test]
    fn clones_share_data() {
        let s = Set::new("cells", 2);
        let a = Dat::<u32>::zeros("a", &s, 1);
        let b = a.clone();
        b.data_mut()[1] = 7;
        assert_eq!(a.to_vec(), vec![0, 7]);
        assert!(a.same(&b));
    }

    #[test]
    fn every_scalar_type_works() {
        let s = Set::new("s", 2);
        assert_eq!(Dat::<f64>::filled("a", &s, 2, 1.5).to_vec(), vec![1.5; 4]);
        assert_eq!(Dat::<f32>::filled("b", &s, 1, 2.5).to_vec(), vec![2.5; 2]);
        assert_eq!(Dat::<i32>::filled("c", &s, 3, -1).to_vec(), vec![-1; 6]);
        assert_eq!(Dat::<i64>::filled("d", &s, 1, 1 << 40).to_vec(), vec![1 << 40; 2]);
        assert_eq!(Dat::<u32>::filled("e", &s, 1, 9).to_vec(), vec![9; 2]);
    }

    #[test]
    fn conflicting_host_borrows_are_errors() {
        let s = Set::new("s", 2);
        let d = Dat::<f64>::zeros("q", &s, 1);
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
}
