//! A model's environment (FLAME GPU's environment properties): constants
//! and arrays every agent function may read and host functions set between
//! steps, and macro properties, arrays that agent functions update with
//! INC, MIN or MAX.

use op2_core::{Scalar, ScalarType};

/// One environment property: `values` of `scalar`, as bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvProperty {
    pub(crate) name: String,
    pub(crate) scalar: ScalarType,
    pub(crate) values: Vec<u8>,
    /// Whether agent functions update it (a macro property).
    pub(crate) reduced: bool,
}

impl EnvProperty {
    /// A property agent functions read, holding `values`.
    pub fn constant<T: Scalar>(name: impl Into<String>, values: &[T]) -> EnvProperty {
        EnvProperty {
            name: name.into(),
            scalar: T::TYPE,
            values: bytemuck::cast_slice(values).to_vec(),
            reduced: false,
        }
    }

    /// A macro property: `len` values of `T`, zero at first, that agent
    /// functions update with INC, MIN or MAX.
    pub fn reduced<T: Scalar>(name: impl Into<String>, len: usize) -> EnvProperty {
        EnvProperty {
            name: name.into(),
            scalar: T::TYPE,
            values: vec![0; len * T::TYPE.size()],
            reduced: true,
        }
    }

    /// The property's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its element type.
    pub fn scalar(&self) -> ScalarType {
        self.scalar
    }

    /// How many values it holds.
    #[allow(clippy::len_without_is_empty)] // a property's size
    pub fn len(&self) -> usize {
        self.values.len() / self.scalar.size()
    }

    /// Whether agent functions update it.
    pub fn is_reduced(&self) -> bool {
        self.reduced
    }
}
