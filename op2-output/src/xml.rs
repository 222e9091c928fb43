//! The pieces of VTK's XML formats the writers share. Data arrays are
//! written in VTK's inline binary format: base64 of a 64-bit byte count
//! and the values' bytes as this machine holds them (the files say which
//! byte order), a third of ASCII's size for doubles and exact.

use crate::field::{vtk_type, Field};

/// The name of the array of every element's global id.
pub(crate) const GLOBAL_ID: &str = "global_id";

/// The byte order of the values written (this machine's).
pub(crate) const BYTE_ORDER: &str = if cfg!(target_endian = "big") {
    "BigEndian"
} else {
    "LittleEndian"
};

/// The opening of a VTK XML file of `kind` (`PolyData`, ...).
pub(crate) fn file_open(out: &mut String, kind: &str) {
    out.push_str("<?xml version=\"1.0\"?>\n");
    out.push_str(&format!(
        "<VTKFile type=\"{kind}\" version=\"1.0\" byte_order=\"{BYTE_ORDER}\" header_type=\"UInt64\">\n"
    ));
}

/// `bytes` in base64 (RFC 4648, with padding).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            match k <= chunk.len() {
                true => out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

/// A whole binary `DataArray` of `components` values per tuple, `bytes`
/// holding them.
pub(crate) fn binary_array(out: &mut String, ty: &str, name: &str, components: usize, bytes: &[u8]) {
    out.push_str(&format!(
        "<DataArray type=\"{ty}\" Name=\"{}\" NumberOfComponents=\"{components}\" format=\"binary\">\n",
        escape(name)
    ));
    let mut block = Vec::with_capacity(8 + bytes.len());
    block.extend_from_slice(&(bytes.len() as u64).to_ne_bytes());
    block.extend_from_slice(bytes);
    out.push_str(&base64(&block));
    out.push_str("\n</DataArray>\n");
}

/// The `PDataArray` declarations of a parallel file's point or cell data:
/// the global ids, then each of `fields`.
pub(crate) fn p_data_arrays(out: &mut String, fields: &[&dyn Field]) {
    out.push_str(&format!(
        "<PDataArray type=\"Int64\" Name=\"{GLOBAL_ID}\" NumberOfComponents=\"1\"/>\n"
    ));
    for f in fields {
        out.push_str(&format!(
            "<PDataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\"/>\n",
            vtk_type(f.scalar()),
            escape(f.name()),
            f.components()
        ));
    }
}

/// A parallel file's `PPoints` (of `positions`) and its `pieces`.
pub(crate) fn p_points_and_pieces(out: &mut String, positions: &dyn Field, pieces: &[String]) {
    out.push_str("<PPoints>\n");
    out.push_str(&format!(
        "<PDataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"3\"/>\n",
        vtk_type(positions.scalar()),
        escape(positions.name())
    ));
    out.push_str("</PPoints>\n");
    for piece in pieces {
        out.push_str(&format!("<Piece Source=\"{}\"/>\n", escape(piece)));
    }
}

/// `Err` naming the first of `fields` whose name is taken: by
/// [`GLOBAL_ID`], or by a field before it (every array of a file's point
/// data, or cell data, has its own name).
pub(crate) fn check_names(fields: &[&dyn Field], what: &str) -> op2_core::Result<()> {
    for (k, f) in fields.iter().enumerate() {
        if f.name() == GLOBAL_ID || fields[..k].iter().any(|g| g.name() == f.name()) {
            return Err(op2_core::Error::InvalidOption {
                option: "output fields",
                reason: format!(
                    "{what}: two arrays would be named `{}` (`{GLOBAL_ID}` holds the global ids): give the Dats distinct names",
                    f.name()
                ),
            });
        }
    }
    Ok(())
}

/// An XML attribute value's text, its entities replaced (those [`escape`]
/// writes).
pub(crate) fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// `text` with XML's special characters as entities.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole `DataArray` of `f`'s values at `elements`, in that order.
pub(crate) fn field_array(
    out: &mut String,
    f: &dyn Field,
    elements: impl Iterator<Item = usize>,
) -> op2_core::Result<()> {
    let values = f.values()?;
    let mut bytes = Vec::new();
    for e in elements {
        values.write_bytes(e, &mut bytes);
    }
    binary_array(out, vtk_type(f.scalar()), f.name(), f.components(), &bytes);
    Ok(())
}

/// A whole `Int64` `DataArray` of `values`.
pub(crate) fn int_array(out: &mut String, name: &str, values: impl Iterator<Item = u64>) {
    let bytes: Vec<u8> = values.flat_map(|v| (v as i64).to_ne_bytes()).collect();
    binary_array(out, "Int64", name, 1, &bytes);
}

/// `Err` unless `positions` has 2 or 3 components (z = 0 in 2-D).
pub(crate) fn check_positions(positions: &dyn Field) -> op2_core::Result<()> {
    let dims = positions.components();
    if (2..=3).contains(&dims) {
        return Ok(());
    }
    Err(op2_core::Error::InvalidOption {
        option: "VTK positions",
        reason: format!(
            "Dat `{}` has {dims} components; positions have 2 or 3",
            positions.name()
        ),
    })
}

/// The `Points` of a file: `positions` at `elements` (z = 0 in 2-D).
pub(crate) fn points(
    out: &mut String,
    positions: &dyn Field,
    elements: impl Iterator<Item = usize>,
) -> op2_core::Result<()> {
    let dims = positions.components();
    let values = positions.values()?;
    let zero = vec![0u8; positions.scalar().size()];
    let mut bytes = Vec::new();
    for e in elements {
        values.write_bytes(e, &mut bytes);
        if dims == 2 {
            bytes.extend_from_slice(&zero);
        }
    }
    out.push_str("<Points>\n");
    binary_array(out, vtk_type(positions.scalar()), positions.name(), 3, &bytes);
    out.push_str("</Points>\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_is_rfc_4648() {
        // The RFC's test vectors.
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (text, want) in cases {
            assert_eq!(base64(text.as_bytes()), want, "{text:?}");
        }
    }
}
