//! The pieces of VTK's XML formats the writers share.

use crate::field::{vtk_type, Field};

/// Opens an ASCII `DataArray` of `components` values per tuple.
pub(crate) fn array_open(out: &mut String, ty: &str, name: &str, components: usize) {
    out.push_str(&format!(
        "<DataArray type=\"{ty}\" Name=\"{}\" NumberOfComponents=\"{components}\" format=\"ascii\">\n",
        escape(name)
    ));
}

/// `text` as an XML attribute value.
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
    array_open(out, vtk_type(f.scalar()), f.name(), f.components());
    for e in elements {
        for c in 0..f.components() {
            values.write(e, c, out);
            out.push(' ');
        }
    }
    out.push_str("\n</DataArray>\n");
    Ok(())
}

/// A whole `Int64` `DataArray` of `values`.
pub(crate) fn int_array(out: &mut String, name: &str, values: impl Iterator<Item = u64>) {
    array_open(out, "Int64", name, 1);
    for v in values {
        out.push_str(&v.to_string());
        out.push(' ');
    }
    out.push_str("\n</DataArray>\n");
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
    out.push_str("<Points>\n");
    array_open(out, vtk_type(positions.scalar()), positions.name(), 3);
    for e in elements {
        for c in 0..dims {
            values.write(e, c, out);
            out.push(' ');
        }
        if dims == 2 {
            out.push_str("0 ");
        }
    }
    out.push_str("\n</DataArray>\n</Points>\n");
    Ok(())
}
