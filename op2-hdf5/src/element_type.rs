//! The element types of OP2's HDF5 files: the `type` attribute's spellings
//! and the stored HDF5 types that go with them.

use hdf5::types::{FloatSize, IntSize, TypeDescriptor};
use op2_core::ScalarType;

/// The spelling OP2 writes in a Dat's `type` attribute (its C type).
pub(crate) fn type_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::F64 => "double",
        ScalarType::F32 => "float",
        ScalarType::I32 => "int",
        ScalarType::I64 => "long long",
        ScalarType::U32 => "unsigned int",
    }
}

/// The element type a `type` attribute names: OP2's C spellings, the
/// Fortran API's and a few common aliases; a `:soa` suffix (OP2's
/// struct-of-arrays hint) is ignored, as are trailing NULs and blanks of a
/// fixed-length string.
pub(crate) fn parse_type_name(text: &str) -> Option<ScalarType> {
    let text = text.trim_end_matches(['\0', ' ']);
    let base = text.strip_suffix(":soa").unwrap_or(text).trim();
    Some(match base {
        "double" | "double precision" | "real(8)" | "r8" => ScalarType::F64,
        "float" | "real" | "real(4)" | "r4" => ScalarType::F32,
        "int" | "integer" | "integer(4)" | "int32_t" | "i4" => ScalarType::I32,
        "long long" | "long" | "ll" | "int64_t" | "integer(8)" | "i8" => ScalarType::I64,
        "unsigned int" | "unsigned" | "uint" | "uint32_t" | "u4" => ScalarType::U32,
        _ => return None,
    })
}

/// The element type of data stored as `stored`, if op2 has it.
pub(crate) fn stored_type(stored: &TypeDescriptor) -> Option<ScalarType> {
    Some(match stored {
        TypeDescriptor::Float(FloatSize::U8) => ScalarType::F64,
        TypeDescriptor::Float(FloatSize::U4) => ScalarType::F32,
        TypeDescriptor::Integer(IntSize::U4) => ScalarType::I32,
        TypeDescriptor::Integer(IntSize::U8) => ScalarType::I64,
        TypeDescriptor::Unsigned(IntSize::U4) => ScalarType::U32,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_name_reads_back_as_its_type() {
        for t in ScalarType::ALL {
            assert_eq!(parse_type_name(type_name(t)), Some(t), "{t:?}");
            let padded = format!("{}\0\0\0", type_name(t));
            assert_eq!(parse_type_name(&padded), Some(t), "{t:?} padded");
            assert_eq!(parse_type_name(&format!("{}:soa", type_name(t))), Some(t), "{t:?}:soa");
        }
        assert_eq!(parse_type_name("quad"), None);
        assert_eq!(parse_type_name(""), None);
    }
}
