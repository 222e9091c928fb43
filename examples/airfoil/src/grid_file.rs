//! OP2's `new_grid.dat` format (ASCII, 0-based): a line
//! `nnode ncell nedge nbedge`, then nnode lines `x y`, ncell lines of 4 node
//! ids, nedge lines `n1 n2 c1 c2`, nbedge lines `n1 n2 cell bound`.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::str::FromStr;

use crate::{AirfoilError, Mesh};

struct Lines<'p, R> {
    inner: std::io::Lines<R>,
    line: usize,
    path: &'p Path,
}

impl<R: BufRead> Lines<'_, R> {
    fn err(&self, message: impl Into<String>) -> AirfoilError {
        AirfoilError::Parse {
            path: self.path.to_path_buf(),
            line: self.line,
            message: message.into(),
        }
    }

    /// The next non-empty line, parsed as `n` numbers.
    fn fields<T: FromStr>(&mut self, n: usize, what: &str) -> Result<Vec<T>, AirfoilError> {
        loop {
            self.line += 1;
            let text = match self.inner.next() {
                None => return Err(self.err(format!("unexpected end of file; expected {what}"))),
                Some(Err(e)) => return Err(self.err(format!("cannot read: {e}"))),
                Some(Ok(t)) => t,
            };
            if text.trim().is_empty() {
                continue;
            }
            let words: Vec<&str> = text.split_whitespace().collect();
            if words.len() != n {
                return Err(self.err(format!("expected {what} ({n} values), found {} values", words.len())));
            }
            return words
                .iter()
                .map(|w| {
                    w.parse::<T>()
                        .map_err(|_| self.err(format!("`{w}` is not a valid number in {what}")))
                })
                .collect();
        }
    }

    fn indices(&mut self, n: usize, what: &str, limits: &[usize]) -> Result<Vec<i32>, AirfoilError> {
        let v: Vec<i64> = self.fields(n, what)?;
        v.iter()
            .zip(limits)
            .map(|(&x, &lim)| {
                if x < 0 || x as usize >= lim {
                    Err(self.err(format!("{what}: index {x} is out of range 0..{lim}")))
                } else {
                    Ok(x as i32)
                }
            })
            .collect()
    }
}

/// Reads a grid file; a malformed file gives an error with its line number.
pub fn read(path: &Path) -> Result<Mesh, AirfoilError> {
    let file = std::fs::File::open(path).map_err(|source| AirfoilError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut lines = Lines {
        inner: BufReader::new(file).lines(),
        line: 0,
        path,
    };
    let sizes: Vec<usize> = lines.fields(4, "the sizes `nnode ncell nedge nbedge`")?;
    let (nnode, ncell, nedge, nbedge) = (sizes[0], sizes[1], sizes[2], sizes[3]);
    let mut m = Mesh {
        x: Vec::with_capacity(2 * nnode),
        cell: Vec::with_capacity(4 * ncell),
        edge: Vec::with_capacity(2 * nedge),
        ecell: Vec::with_capacity(2 * nedge),
        bedge: Vec::with_capacity(2 * nbedge),
        becell: Vec::with_capacity(nbedge),
        bound: Vec::with_capacity(nbedge),
    };
    for _ in 0..nnode {
        m.x.extend(lines.fields::<f64>(2, "node coordinates `x y`")?);
    }
    for _ in 0..ncell {
        m.cell.extend(lines.indices(4, "a cell's 4 nodes", &[nnode; 4])?);
    }
    for _ in 0..nedge {
        let v = lines.indices(4, "an edge `n1 n2 c1 c2`", &[nnode, nnode, ncell, ncell])?;
        m.edge.extend(&v[..2]);
        m.ecell.extend(&v[2..]);
    }
    for _ in 0..nbedge {
        let v = lines.indices(4, "a boundary edge `n1 n2 cell bound`", &[nnode, nnode, ncell, 3])?;
        m.bedge.extend(&v[..2]);
        m.becell.push(v[2]);
        m.bound.push(v[3]);
    }
    Ok(m)
}

/// Writes a grid file (coordinates as C's `%f`).
pub fn write(path: &Path, m: &Mesh) -> Result<(), AirfoilError> {
    let io = |source| AirfoilError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut out = BufWriter::new(std::fs::File::create(path).map_err(io)?);
    let mut s = String::new();
    let _ = writeln!(s, "{} {} {} {}", m.nnode(), m.ncell(), m.nedge(), m.nbedge());
    for p in m.x.chunks(2) {
        let _ = writeln!(s, "{:.6} {:.6}", p[0], p[1]);
    }
    for c in m.cell.chunks(4) {
        let _ = writeln!(s, "{} {} {} {}", c[0], c[1], c[2], c[3]);
    }
    for (e, c) in m.edge.chunks(2).zip(m.ecell.chunks(2)) {
        let _ = writeln!(s, "{} {} {} {}", e[0], e[1], c[0], c[1]);
    }
    for ((e, c), b) in m.bedge.chunks(2).zip(&m.becell).zip(&m.bound) {
        let _ = writeln!(s, "{} {} {} {}", e[0], e[1], c, b);
    }
    out.write_all(s.as_bytes()).map_err(io)?;
    out.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("op2-airfoil-{}-{name}", std::process::id()))
    }

    #[test]
    fn round_trip() {
        let m = generate(6, 5);
        let p = temp("rt.dat");
        write(&p, &m).unwrap();
        let back = read(&p).unwrap();
        std::fs::remove_file(&p).ok();
        assert_eq!(back, m);
    }

    fn parse_error(text: &str) -> (usize, String) {
        let p = temp(&format!("bad{}.dat", text.len()));
        std::fs::write(&p, text).unwrap();
        let e = read(&p).unwrap_err();
        std::fs::remove_file(&p).ok();
        match e {
            AirfoilError::Parse { line, message, .. } => (line, message),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn malformed_files_name_the_line() {
        let (line, msg) = parse_error("2 1 0 0\n0.0 0.0\n1.0 x\n0 1 1 0\n");
        assert_eq!(line, 3);
        assert!(msg.contains("`x`"), "{msg}");
        let (line, msg) = parse_error("2 1 0 0\n0.0 0.0\n1.0 1.0\n0 1 2 0\n");
        assert_eq!(line, 4);
        assert!(msg.contains("out of range"), "{msg}");
        let (line, msg) = parse_error("2 1 0 0\n0.0 0.0\n");
        assert_eq!(line, 3);
        assert!(msg.contains("end of file"), "{msg}");
        let (line, msg) = parse_error("2 1 0\n");
        assert_eq!(line, 1);
        assert!(msg.contains("4 values"), "{msg}");
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let e = read(Path::new("/nonexistent/new_grid.dat")).unwrap_err();
        assert!(matches!(e, AirfoilError::Io { .. }));
        assert!(e.to_string().contains("/nonexistent/new_grid.dat"));
    }
}
