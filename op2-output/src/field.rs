//! A column source: a Dat seen through its element type, so that a table or
//! a VTK file can hold Dats of several types.

use std::fmt::{Display, Write};

use op2_core::{Dat, HostRef, Scalar, ScalarType, Set};

/// What the writers need of a Dat: its name, set, components and values as
/// text. Implemented for every [`Dat`].
pub trait Field {
    /// The Dat's name (the column or array name).
    fn name(&self) -> &str;
    /// The set it lives on.
    fn set(&self) -> &Set;
    /// Values per element.
    fn components(&self) -> usize;
    /// The element type.
    fn scalar(&self) -> ScalarType;
    /// The values, read on the host (brought back from a device first) and
    /// borrowed while the writer formats them.
    ///
    /// # Errors
    /// [`op2_core::Error::HostBorrow`] if the Dat is mutably borrowed.
    fn values(&self) -> op2_core::Result<Box<dyn Values + '_>>;
}

/// A Dat's values, borrowed for writing.
pub trait Values {
    /// Appends component `c` of element `e` to `out`, in the shortest form
    /// that reads back to the same value.
    fn write(&self, e: usize, c: usize, out: &mut String);
    /// Appends every component of element `e` to `out`, as this machine
    /// holds them.
    fn write_bytes(&self, e: usize, out: &mut Vec<u8>);
}

impl<T: Scalar + Display> Field for Dat<T> {
    fn name(&self) -> &str {
        Dat::name(self)
    }
    fn set(&self) -> &Set {
        Dat::set(self)
    }
    fn components(&self) -> usize {
        self.dim()
    }
    fn scalar(&self) -> ScalarType {
        T::TYPE
    }
    fn values(&self) -> op2_core::Result<Box<dyn Values + '_>> {
        Ok(Box::new(DatValues {
            data: self.try_data_ro()?,
            dim: self.dim(),
        }))
    }
}

struct DatValues<'a, T> {
    data: HostRef<'a, T>,
    dim: usize,
}

impl<T: Scalar + Display> Values for DatValues<'_, T> {
    fn write(&self, e: usize, c: usize, out: &mut String) {
        // Writing to a String cannot fail.
        let _ = write!(out, "{}", self.data[e * self.dim + c]);
    }
    fn write_bytes(&self, e: usize, out: &mut Vec<u8>) {
        let values = &self.data[e * self.dim..(e + 1) * self.dim];
        out.extend_from_slice(bytemuck::cast_slice(values));
    }
}

/// The VTK name of an element type.
pub(crate) fn vtk_type(t: ScalarType) -> &'static str {
    match t {
        ScalarType::F64 => "Float64",
        ScalarType::F32 => "Float32",
        ScalarType::I32 => "Int32",
        ScalarType::I64 => "Int64",
        ScalarType::U32 => "UInt32",
    }
}

/// The owned elements of `set` in global-id order (the order rows and
/// points are written in, the same whatever order loops left them in).
pub(crate) fn by_id(set: &Set) -> Vec<(u64, usize)> {
    let mut order: Vec<(u64, usize)> = (0..set.size())
        .map(|e| (set.global_id(e).unwrap_or(e as u64), e))
        .collect();
    order.sort_unstable();
    order
}

/// `Err` unless every field lives on `set`.
pub(crate) fn check_fields(set: &Set, fields: &[&dyn Field], what: &str) -> op2_core::Result<()> {
    match fields.iter().find(|f| !f.set().same(set)) {
        Some(f) => Err(op2_core::Error::InvalidOption {
            option: "output fields",
            reason: format!(
                "{what}: Dat `{}` lives on set `{}`, not on `{}`",
                f.name(),
                f.set().name(),
                set.name()
            ),
        }),
        None => Ok(()),
    }
}
