//! Dats and Globals whose element type the model names at run time (a
//! variable's `ScalarType`), kept type-erased and handed back typed to the
//! code that names the type (a function's body, the host), which gets an
//! error naming the variable when it asks for another type or width.

use std::any::Any;

use op2_agents::MessageList;
use op2_core::{with_scalar, Dat, Error, Global, Result, Scalar, ScalarType, Set};

/// `value` (one value of `scalar`, as bytes) as text that parses back to
/// the same bits ([`parse_value`]).
pub(crate) fn format_value(scalar: ScalarType, value: &[u8]) -> String {
    with_scalar!(scalar, T => bytemuck::pod_read_unaligned::<T>(value).to_string())
}

/// The bytes of one value of `scalar` written as `text`, if it is one.
pub(crate) fn parse_value(scalar: ScalarType, text: &str) -> Option<Vec<u8>> {
    with_scalar!(scalar, T => text.trim().parse::<T>().ok().map(|v| bytemuck::bytes_of(&v).to_vec()))
}

/// A `Dat<T>` of a type named at run time.
pub(crate) struct AnyDat {
    scalar: ScalarType,
    dim: usize,
    dat: Box<dyn Any>,
}

impl AnyDat {
    /// A Dat called `name` on `set` holding `bytes` (`dim` values of
    /// `scalar` per element, as bytes).
    pub fn from_bytes(name: String, set: &Set, scalar: ScalarType, dim: usize, bytes: &[u8]) -> Result<AnyDat> {
        let dat: Box<dyn Any> = with_scalar!(scalar, T => {
            let values: Vec<T> = bytes.chunks_exact(scalar.size()).map(bytemuck::pod_read_unaligned).collect();
            Box::new(Dat::<T>::from_vec(name, set, dim, values)?)
        });
        Ok(AnyDat { scalar, dim, dat })
    }

    /// A copy of this Dat that `list` carries with its messages.
    pub fn carried_by(&self, list: &MessageList) -> Result<AnyDat> {
        let dat: Box<dyn Any> = with_scalar!(self.scalar, T => Box::new(list.carry(self.typed_unchecked::<T>())?));
        Ok(AnyDat { dat, ..*self })
    }

    /// A Dat called `name` on `set` of this one's type and dim, zero.
    pub fn zeros_like(&self, name: String, set: &Set) -> Result<AnyDat> {
        let dat: Box<dyn Any> = with_scalar!(self.scalar, T => Box::new(Dat::<T>::zeros(name, set, self.dim)?));
        Ok(AnyDat { dat, ..*self })
    }

    /// Swaps its values with `other`'s (`Dat::swap`), both of one type.
    pub fn swap(&self, other: &AnyDat) -> Result<()> {
        with_scalar!(self.scalar, T => self.typed_unchecked::<T>().swap(other.get::<T>().expect("of one type")))
    }

    /// This rank's part of this Dat, cut as `d` cut its set.
    #[cfg(feature = "mpi")]
    pub fn distributed(&self, d: &op2_mpi::Distributed) -> Result<AnyDat> {
        let dat: Box<dyn Any> = with_scalar!(self.scalar, T => Box::new(d.dat(self.typed_unchecked::<T>())?));
        Ok(AnyDat { dat, ..*self })
    }

    /// Its element type.
    pub fn scalar(&self) -> ScalarType {
        self.scalar
    }

    /// Its values, as bytes (a copy from wherever they are).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        with_scalar!(self.scalar, T => Ok(bytemuck::cast_slice(&self.typed_unchecked::<T>().try_data_ro()?[..]).to_vec()))
    }

    /// The Dat's name.
    pub fn name(&self) -> String {
        with_scalar!(self.scalar, T => self.typed_unchecked::<T>().name().to_string())
    }

    /// The Dat, as the runtime handles any Dat (to stage it on a device).
    pub fn handle(&self) -> &dyn op2_core::DatHandle {
        with_scalar!(self.scalar, T => self.typed_unchecked::<T>() as &dyn op2_core::DatHandle)
    }

    /// The Dat as `Dat<T>`, or `None` for another `T`.
    pub fn get<T: Scalar>(&self) -> Option<&Dat<T>> {
        self.dat.downcast_ref()
    }

    fn typed_unchecked<T: Scalar>(&self) -> &Dat<T> {
        self.get().expect("AnyDat's box holds a Dat of its scalar type")
    }

    /// The Dat as `Dat<T>`; an error naming `what` (for example "variable
    /// `circle.pos`") and `whose` use (a function, the host) otherwise.
    pub fn typed<T: Scalar>(&self, model: &str, what: &str, whose: &str) -> Result<&Dat<T>> {
        self.get().ok_or_else(|| Error::InvalidModel {
            model: model.to_string(),
            reason: format!(
                "{whose} asks for {what} as `{}` values, and it holds {} `{}` per agent",
                T::TYPE.rust_name(),
                self.dim,
                self.scalar.rust_name()
            ),
        })
    }
}

/// A `Global<T>` of a type named at run time (an environment property).
pub(crate) struct AnyGlobal {
    scalar: ScalarType,
    global: Box<dyn Any>,
}

impl AnyGlobal {
    /// A Global called `name` holding `bytes` (values of `scalar`).
    pub fn from_bytes(name: &str, scalar: ScalarType, bytes: &[u8]) -> Result<AnyGlobal> {
        let global: Box<dyn Any> = with_scalar!(scalar, T => {
            let values: Vec<T> = bytes.chunks_exact(scalar.size()).map(bytemuck::pod_read_unaligned).collect();
            Box::new(Global::<T>::new(name, values)?)
        });
        Ok(AnyGlobal { scalar, global })
    }

    /// Its values, as bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        with_scalar!(self.scalar, T => {
            let g = self.global.downcast_ref::<Global<T>>().expect("AnyGlobal's box holds a Global of its scalar type");
            Ok(bytemuck::cast_slice(&g.try_data_ro()?[..]).to_vec())
        })
    }

    /// Sets its values from `bytes` (as many as it holds).
    pub fn set_bytes(&self, bytes: &[u8]) -> Result<()> {
        with_scalar!(self.scalar, T => {
            let g = self.global.downcast_ref::<Global<T>>().expect("AnyGlobal's box holds a Global of its scalar type");
            let mut values = g.try_data_mut()?;
            let given: Vec<T> = bytes.chunks_exact(self.scalar.size()).map(bytemuck::pod_read_unaligned).collect();
            if given.len() != values.len() {
                return Err(Error::InvalidModel {
                    model: String::new(),
                    reason: format!("{} values given for property `{}` of {}", given.len(), g.name(), values.len()),
                });
            }
            values.copy_from_slice(&given);
            Ok(())
        })
    }

    /// Shares the Global among the ranks of `ranks`
    /// ([`Global::reduce_across`]).
    #[cfg(feature = "mpi")]
    pub fn reduce_across(&self, ranks: std::sync::Arc<dyn op2_core::AllReduce>) {
        with_scalar!(self.scalar, T => {
            if let Some(g) = self.global.downcast_ref::<Global<T>>() {
                g.reduce_across(Some(ranks));
            }
        })
    }

    /// The Global as `Global<T>`; an error naming the property and `whose`
    /// use otherwise.
    pub fn typed<T: Scalar>(&self, model: &str, name: &str, whose: &str) -> Result<&Global<T>> {
        self.global.downcast_ref().ok_or_else(|| Error::InvalidModel {
            model: model.to_string(),
            reason: format!(
                "{whose} asks for environment property `{name}` as `{}` values, and it holds `{}`",
                T::TYPE.rust_name(),
                self.scalar.rust_name()
            ),
        })
    }
}
