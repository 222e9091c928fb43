//! CSV tables: one row per element of a Set, in global-id order.

use std::path::Path;

use op2_core::{Error, Result, Set};

use crate::field::{by_id, check_fields, Field};
use crate::file::write_file;

/// A CSV table of a Set's elements: an `id` column (the elements' global
/// ids, rows in their order) and one column per component of each Dat
/// added, named `name` for a Dat of one component and `name_0`, `name_1`, ...
/// otherwise, or as given to [`CsvTable::named`].
///
/// ```
/// use op2_core::{Dat, Set};
/// use op2_output::CsvTable;
/// let agents = Set::with_global_ids("agents", vec![7, 3]).unwrap();
/// let pos = Dat::from_vec("pos", &agents, 2, vec![1.5f32, 2.0, -0.25, 4.0]).unwrap();
/// let alive = Dat::from_vec("alive", &agents, 1, vec![1, 0]).unwrap();
/// let table = CsvTable::new(&agents).named(&pos, &["x", "y"]).column(&alive);
/// assert_eq!(table.to_string().unwrap(), "id,x,y,alive\n3,-0.25,4,0\n7,1.5,2,1\n");
/// ```
pub struct CsvTable<'a> {
    set: &'a Set,
    columns: Vec<(&'a dyn Field, Vec<String>)>,
    header: bool,
}

impl<'a> CsvTable<'a> {
    /// A table of the elements of `set` this process owns, with a header.
    pub fn new(set: &'a Set) -> CsvTable<'a> {
        CsvTable {
            set,
            columns: Vec::new(),
            header: true,
        }
    }

    /// Adds the Dat's components as columns, named after it.
    pub fn column(mut self, field: &'a dyn Field) -> CsvTable<'a> {
        let names = match field.components() {
            1 => vec![field.name().to_string()],
            n => (0..n).map(|c| format!("{}_{c}", field.name())).collect(),
        };
        self.columns.push((field, names));
        self
    }

    /// Adds the Dat's components as columns named `names` (one per component).
    pub fn named(mut self, field: &'a dyn Field, names: &[&str]) -> CsvTable<'a> {
        self.columns
            .push((field, names.iter().map(|n| n.to_string()).collect()));
        self
    }

    /// Whether the first line names the columns (the default).
    pub fn header(mut self, header: bool) -> CsvTable<'a> {
        self.header = header;
        self
    }

    /// The table as text.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] if a Dat lives on another set or was given
    /// a number of names other than its components;
    /// [`Error::HostBorrow`] if a Dat is mutably borrowed.
    pub fn to_string(&self) -> Result<String> {
        let fields: Vec<&dyn Field> = self.columns.iter().map(|(f, _)| *f).collect();
        check_fields(self.set, &fields, "a CSV table")?;
        if let Some((f, names)) = self.columns.iter().find(|(f, names)| names.len() != f.components()) {
            return Err(Error::InvalidOption {
                option: "CSV columns",
                reason: format!(
                    "Dat `{}` has {} components but {} column names were given",
                    f.name(),
                    f.components(),
                    names.len()
                ),
            });
        }
        let values = fields.iter().map(|f| f.values()).collect::<Result<Vec<_>>>()?;
        let mut out = String::new();
        if self.header {
            out.push_str("id");
            for name in self.columns.iter().flat_map(|(_, names)| names) {
                out.push(',');
                out.push_str(name);
            }
            out.push('\n');
        }
        for (id, e) in by_id(self.set) {
            out.push_str(&id.to_string());
            for (f, v) in fields.iter().zip(&values) {
                for c in 0..f.components() {
                    out.push(',');
                    v.write(e, c, &mut out);
                }
            }
            out.push('\n');
        }
        Ok(out)
    }

    /// Writes the table to `path` (replacing it).
    ///
    /// # Errors
    /// As [`CsvTable::to_string`], and [`Error::Io`] if the file cannot be
    /// written.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let text = self.to_string()?;
        write_file(path.as_ref(), text.as_bytes())
    }
}

/// One table from the parts several processes wrote of it
/// ([`CsvTable::to_string`] of each one's elements, with the same header):
/// the header once, then every row in id order (the first column).
///
/// # Errors
/// [`Error::InvalidOption`] if the parts' headers differ or a row does not
/// start with an id.
pub fn merge_by_id(parts: &[&str]) -> Result<String> {
    let bad = |reason: String| Error::InvalidOption {
        option: "CSV parts",
        reason,
    };
    let mut header = None;
    let mut rows: Vec<(u64, &str)> = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        let mut lines = part.lines();
        let Some(h) = lines.next() else { continue };
        match header {
            None => header = Some(h),
            Some(first) if first != h => {
                return Err(bad(format!("part {k} has header {h:?}, part 0 {first:?}")));
            }
            Some(_) => {}
        }
        for line in lines {
            let id = line.split(',').next().and_then(|f| f.parse().ok());
            let id = id.ok_or_else(|| bad(format!("part {k}: row {line:?} does not start with an id")))?;
            rows.push((id, line));
        }
    }
    // Stable: rows of one id (none in a table of a Set) keep their order.
    rows.sort_by_key(|&(id, _)| id);
    let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    if let Some(h) = header {
        out.push_str(h);
        out.push('\n');
    }
    for (_, line) in rows {
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parts_merge_in_id_order() {
        let a = "id,x\n1,0.5\n4,2\n";
        let b = "id,x\n0,7\n2,1\n9,3\n";
        assert_eq!(
            super::merge_by_id(&[a, b]).unwrap(),
            "id,x\n0,7\n1,0.5\n2,1\n4,2\n9,3\n"
        );
        assert_eq!(super::merge_by_id(&[a, ""]).unwrap(), a);
        assert!(super::merge_by_id(&[a, "id,y\n3,1\n"]).is_err());
        assert!(super::merge_by_id(&[a, "id,x\nthree,1\n"]).is_err());
    }

    use super::*;
    use op2_core::Dat;

    #[test]
    fn rows_follow_the_ids_and_values_read_back_exactly() {
        let agents = Set::with_global_ids("agents", vec![20, 5, 11]).unwrap();
        let xs = vec![0.1f64, 1.0 / 3.0, -2.5e-300];
        let x = Dat::from_vec("x", &agents, 1, xs.clone()).unwrap();
        let k = Dat::from_vec("k", &agents, 2, vec![1u32, 2, 3, 4, 5, 6]).unwrap();
        let text = CsvTable::new(&agents).column(&x).column(&k).to_string().unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "id,x,k_0,k_1");
        let ids: Vec<&str> = lines[1..].iter().map(|l| l.split(',').next().unwrap()).collect();
        assert_eq!(ids, ["5", "11", "20"]);
        // The shortest text that parses back to the same bits.
        let back: Vec<f64> = lines[1..]
            .iter()
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert_eq!(back, [xs[1], xs[2], xs[0]]);
        assert_eq!(lines[1], format!("5,{},3,4", xs[1]));
        let bare = CsvTable::new(&agents).column(&x).header(false).to_string().unwrap();
        assert_eq!(bare.lines().count(), 3);
    }

    #[test]
    fn bad_tables_are_errors() {
        let agents = Set::new("agents", 2).unwrap();
        let others = Set::new("others", 2).unwrap();
        let pos = Dat::from_vec("pos", &agents, 2, vec![0.0f32; 4]).unwrap();
        let stray = Dat::from_vec("stray", &others, 1, vec![0i32; 2]).unwrap();
        let e = CsvTable::new(&agents).column(&stray).to_string().unwrap_err();
        assert!(
            e.to_string()
                .contains("Dat `stray` lives on set `others`, not on `agents`"),
            "{e}"
        );
        let e = CsvTable::new(&agents).named(&pos, &["x"]).to_string().unwrap_err();
        assert!(
            e.to_string().contains("`pos` has 2 components but 1 column names"),
            "{e}"
        );
        let _held = pos.data_mut();
        assert!(
            CsvTable::new(&agents).column(&pos).to_string().is_err(),
            "a mutably borrowed Dat"
        );
        let dir = std::env::temp_dir().join("op2-output-no-such-dir").join("t.csv");
        let e = CsvTable::new(&agents).write(&dir).unwrap_err();
        assert!(e.to_string().contains("t.csv"), "{e}");
    }
}
