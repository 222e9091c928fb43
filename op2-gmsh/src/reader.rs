//! Reading Gmsh's `.msh` format 4.1, ASCII and binary (little-endian,
//! 8-byte sizes): `$MeshFormat`, `$PhysicalNames`, `$Entities`, `$Nodes`
//! and `$Elements`; other sections are skipped. Every problem is an
//! `Error::MeshFile` naming the file, the section and what was wrong.

use std::collections::HashMap;
use std::path::Path;

use op2_core::{Error, Result};

use crate::mesh::twice_area;
use crate::GmshMesh;

/// Element types: Gmsh's number, its name and its node count.
const LINE: i32 = 1;
const TRIANGLE: i32 = 2;
const QUADRANGLE: i32 = 3;
const POINT: i32 = 15;

/// Gmsh's name of an element type, for messages.
fn type_name(t: i32) -> &'static str {
    match t {
        4 => "tetrahedron",
        5 => "hexahedron",
        6 => "prism",
        7 => "pyramid",
        8 => "3-node line",
        9 => "6-node triangle",
        10 => "9-node quadrangle",
        16 => "8-node quadrangle",
        _ => "element",
    }
}

/// The file being read: its bytes, a position, and how numbers are stored.
struct Input<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    pos: usize,
    binary: bool,
    section: String,
}

impl<'a> Input<'a> {
    fn bad(&self, reason: impl Into<String>) -> Error {
        Error::mesh_file(self.path, self.section.clone(), reason)
    }

    /// The next line (without its end), or `None` at the end of the file.
    fn line(&mut self) -> Option<&'a str> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        self.pos += (end + 1).min(rest.len());
        let line = std::str::from_utf8(&rest[..end]).unwrap_or("\u{fffd}");
        Some(line.trim_end_matches('\r'))
    }

    /// The next whitespace-separated word (ASCII).
    fn word(&mut self, what: &str) -> Result<&'a str> {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        let start = self.pos;
        while self.pos < self.bytes.len() && !self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        match std::str::from_utf8(&self.bytes[start..self.pos]) {
            Ok("") => Err(self.bad(format!("the file ends where {what} was expected"))),
            Ok(w) => Ok(w),
            Err(_) => Err(self.bad(format!("{what} expected, found bytes that are not text"))),
        }
    }

    /// `N` raw bytes (binary).
    fn raw<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let Some(bytes) = self.bytes.get(self.pos..self.pos + N) else {
            return Err(self.bad(format!("the file ends where {what} was expected")));
        };
        self.pos += N;
        Ok(bytes.try_into().expect("N bytes"))
    }

    fn parsed<T: std::str::FromStr>(&mut self, what: &str) -> Result<T> {
        let w = self.word(what)?;
        w.parse().map_err(|_| self.bad(format!("{what} expected, found {w:?}")))
    }

    /// An `int` (4 bytes in binary).
    fn int(&mut self, what: &str) -> Result<i32> {
        match self.binary {
            true => Ok(i32::from_le_bytes(self.raw::<4>(what)?)),
            false => self.parsed(what),
        }
    }

    /// A `size_t` (8 bytes in binary), checked to be at most `limit`.
    fn size(&mut self, what: &str, limit: u64) -> Result<u64> {
        let v = match self.binary {
            true => u64::from_le_bytes(self.raw::<8>(what)?),
            false => self.parsed(what)?,
        };
        match v <= limit {
            true => Ok(v),
            false => Err(self.bad(format!("{what} {v} is more than the file can hold ({limit})"))),
        }
    }

    /// A count of items of at least `item_bytes` bytes each in binary: no
    /// more than the rest of the file can hold, so that a lying count is an
    /// error and not a huge allocation.
    fn count(&mut self, what: &str, item_bytes: usize) -> Result<usize> {
        // In text an item takes at least a digit and a separator.
        self.count_of(what, item_bytes, 2)
    }

    /// [`Input::count`] of items of at least `binary_bytes` bytes in
    /// binary and `text_bytes` in text.
    fn count_of(&mut self, what: &str, binary_bytes: usize, text_bytes: usize) -> Result<usize> {
        let item_bytes = if self.binary { binary_bytes } else { text_bytes }.max(1);
        let limit = (self.bytes.len() - self.pos.min(self.bytes.len())) / item_bytes;
        Ok(self.size(what, limit as u64)? as usize)
    }

    /// A `double` (8 bytes in binary), finite.
    fn double(&mut self, what: &str) -> Result<f64> {
        let v = match self.binary {
            true => f64::from_le_bytes(self.raw::<8>(what)?),
            false => self.parsed(what)?,
        };
        match v.is_finite() {
            true => Ok(v),
            false => Err(self.bad(format!("{what} is {v}, not a finite number"))),
        }
    }

    /// The line closing the current section.
    fn end(&mut self) -> Result<()> {
        let want = format!("$End{}", &self.section[1..]);
        let found = self.word(&want)?;
        match found == want {
            true => Ok(()),
            false => Err(self.bad(format!(
                "{want} expected, found {found:?} (more data than the counts say?)"
            ))),
        }
    }

    /// Skips to the end of an unknown section.
    fn skip(&mut self) -> Result<()> {
        let want = format!("$End{}", &self.section[1..]);
        while let Some(line) = self.line() {
            if line.trim() == want {
                return Ok(());
            }
        }
        Err(self.bad(format!("no {want}")))
    }
}

/// What the sections say, before the mesh is assembled.
#[derive(Default)]
struct Sections {
    format: bool,
    names: Vec<(i32, i32, String)>,
    /// (dim, entity tag) -> the entity's first physical tag.
    groups: HashMap<(i32, i32), i32>,
    coords: Vec<[f64; 3]>,
    tags: Vec<u64>,
    /// 2-D elements: tag and node tags.
    cells: Vec<(u64, Vec<u64>)>,
    /// Lines: entity tag and node tags.
    lines: Vec<(i32, [u64; 2])>,
}

fn mesh_format(input: &mut Input, s: &mut Sections) -> Result<()> {
    let version = input.word("the version")?;
    if version != "4.1" {
        return Err(input.bad(format!(
            "version {version}: only 4.1 is read (save with `gmsh -format msh41` or Mesh.MshFileVersion = 4.1)"
        )));
    }
    let file_type = input.word("the file type")?;
    let data_size = input.word("the data size")?;
    if data_size != "8" {
        return Err(input.bad(format!("data size {data_size}: only 8-byte sizes are read")));
    }
    input.binary = match file_type {
        "0" => false,
        "1" => true,
        _ => return Err(input.bad(format!("file type {file_type:?}, expected 0 (ASCII) or 1 (binary)"))),
    };
    if input.binary {
        // The line's end, then the integer 1 to tell the byte order.
        input.line();
        match input.int("the byte-order mark")? {
            1 => {}
            _ => return Err(input.bad("a big-endian file: only little-endian binary files are read")),
        }
    }
    s.format = true;
    input.end()
}

fn physical_names(input: &mut Input, s: &mut Sections) -> Result<()> {
    // Always text, also in binary files.
    let n: usize = input.parsed("the number of physical names")?;
    input.line();
    // A group named twice, or a name given to two groups of a dimension,
    // would make a lookup by name pick one of them silently.
    let mut tags = std::collections::HashSet::new();
    let mut names = std::collections::HashSet::new();
    for k in 0..n {
        let line = input
            .line()
            .ok_or_else(|| input.bad(format!("the file ends at physical name {} of {n}", k + 1)))?;
        let mut words = line.splitn(3, char::is_whitespace);
        let dim = words.next().and_then(|w| w.parse::<i32>().ok());
        let tag = words.next().and_then(|w| w.parse::<i32>().ok());
        let name = words
            .next()
            .map(str::trim)
            .and_then(|w| w.strip_prefix('"')?.strip_suffix('"'));
        match (dim, tag, name) {
            (Some(d), Some(t), Some(name)) => {
                if !tags.insert((d, t)) {
                    return Err(input.bad(format!("physical group {t} of dimension {d} is named twice")));
                }
                if !names.insert((d, name.to_string())) {
                    return Err(input.bad(format!("two physical groups of dimension {d} are named {name:?}")));
                }
                s.names.push((d, t, name.to_string()))
            }
            _ => return Err(input.bad(format!("`dim tag \"name\"` expected, found {line:?}"))),
        }
    }
    input.end()
}

fn entities(input: &mut Input, s: &mut Sections) -> Result<()> {
    let mut counts = [0; 4];
    for (d, c) in counts.iter_mut().enumerate() {
        *c = input.count(&format!("the number of {}-D entities", d), 4)?;
    }
    for (dim, &count) in counts.iter().enumerate() {
        for _ in 0..count {
            let tag = input.int("an entity tag")?;
            // A point has its coordinates, the others their bounding box.
            for _ in 0..if dim == 0 { 3 } else { 6 } {
                input.double("an entity's coordinate")?;
            }
            let nphys = input.count("the number of physical tags", 4)?;
            for k in 0..nphys {
                let p = input.int("a physical tag")?;
                if k == 0 {
                    s.groups.insert((dim as i32, tag), p);
                }
            }
            if dim > 0 {
                let nbound = input.count("the number of bounding entities", 4)?;
                for _ in 0..nbound {
                    input.int("a bounding entity")?;
                }
            }
        }
    }
    input.end()
}

/// A node's bytes in a binary file: its tag and x, y, z.
const NODE_BYTES: usize = 32;

fn nodes(input: &mut Input, s: &mut Sections) -> Result<()> {
    let blocks = input.count("the number of entity blocks", 4)?;
    // A node takes a tag and three coordinates: 32 bytes in binary, and in
    // text at least "1\n" and "0 0 0\n". Memory reserved for the nodes (32
    // bytes each) is then at most 4 times the rest of the file.
    let total = input.count_of("the number of nodes", NODE_BYTES, 8)?;
    input.size("the smallest node tag", u64::MAX)?;
    input.size("the largest node tag", u64::MAX)?;
    // A second $Nodes section adds to the first: its count is its own.
    let before = s.coords.len();
    s.coords.reserve(total);
    s.tags.reserve(total);
    for _ in 0..blocks {
        let dim = input.int("an entity dimension")?;
        input.int("an entity tag")?;
        let parametric = input.int("the parametric flag")?;
        let n = input.count_of("the number of nodes in the block", NODE_BYTES, 8)?;
        for _ in 0..n {
            s.tags.push(input.size("a node tag", u64::MAX)?);
        }
        // Parametric nodes carry dim more numbers after x y z.
        let params = if parametric == 1 { dim.clamp(0, 3) as usize } else { 0 };
        for _ in 0..n {
            let xyz = [input.double("x")?, input.double("y")?, input.double("z")?];
            for _ in 0..params {
                input.double("a parametric coordinate")?;
            }
            s.coords.push(xyz);
        }
    }
    if s.coords.len() - before != total {
        return Err(input.bad(format!(
            "the header says {total} nodes, the blocks hold {}",
            s.coords.len() - before
        )));
    }
    input.end()
}

fn elements(input: &mut Input, s: &mut Sections) -> Result<()> {
    let blocks = input.count("the number of entity blocks", 4)?;
    let total = input.count("the number of elements", 8)?;
    input.size("the smallest element tag", u64::MAX)?;
    input.size("the largest element tag", u64::MAX)?;
    let mut seen = 0;
    for _ in 0..blocks {
        let dim = input.int("an entity dimension")?;
        let entity = input.int("an entity tag")?;
        let kind = input.int("an element type")?;
        let n = input.count("the number of elements in the block", 8)?;
        let arity = match kind {
            POINT => 1,
            LINE => 2,
            TRIANGLE => 3,
            QUADRANGLE => 4,
            other => {
                return Err(input.bad(format!(
                    "element type {other} ({}) in entity ({dim}, {entity}): only points (15), lines (1), triangles (2) and quadrangles (3) are read",
                    type_name(other)
                )))
            }
        };
        for _ in 0..n {
            let tag = input.size("an element tag", u64::MAX)?;
            let mut nodes = Vec::with_capacity(arity);
            for _ in 0..arity {
                nodes.push(input.size("a node tag", u64::MAX)?);
            }
            match kind {
                LINE => s.lines.push((entity, [nodes[0], nodes[1]])),
                TRIANGLE | QUADRANGLE => s.cells.push((tag, nodes)),
                _ => {}
            }
        }
        seen += n;
    }
    if seen != total {
        return Err(input.bad(format!("the header says {total} elements, the blocks hold {seen}")));
    }
    input.end()
}

/// Reads a 2-D mesh from a `.msh` file (format 4.1, ASCII or binary):
/// nodes, triangles and quadrilaterals (made counter-clockwise), lines with
/// the physical group of their curve, and the physical groups' names.
pub fn read_msh(path: impl AsRef<Path>) -> Result<GmshMesh> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::mesh_file(path, "/", format!("cannot read: {e}")))?;
    let mut input = Input {
        path,
        bytes: &bytes,
        pos: 0,
        binary: false,
        section: "/".into(),
    };
    let mut s = Sections::default();
    while let Some(line) = input.line() {
        let name = line.trim();
        if name.is_empty() {
            continue;
        }
        if !s.format && name != "$MeshFormat" {
            input.section = name.chars().take(40).collect();
            return Err(input.bad("the file must begin with $MeshFormat (is it a Gmsh .msh file?)"));
        }
        if !name.starts_with('$') || name.starts_with("$End") {
            return Err(input.bad(format!("a section ($Name) expected, found {name:?}")));
        }
        input.section = name.to_string();
        match name {
            "$MeshFormat" => mesh_format(&mut input, &mut s)?,
            "$PhysicalNames" => physical_names(&mut input, &mut s)?,
            "$Entities" => entities(&mut input, &mut s)?,
            "$Nodes" => nodes(&mut input, &mut s)?,
            "$Elements" => elements(&mut input, &mut s)?,
            _ => input.skip()?,
        }
        // Between sections.
        input.section = "/".into();
    }
    assemble(path, s)
}

/// The mesh from what the sections said: node tags resolved, cells made
/// counter-clockwise, lines given their groups.
fn assemble(path: &Path, s: Sections) -> Result<GmshMesh> {
    let bad = |object: &str, reason: String| Error::mesh_file(path, object, reason);
    if !s.format {
        return Err(bad("$MeshFormat", "missing: not a Gmsh .msh file".into()));
    }
    let mut index = HashMap::with_capacity(s.tags.len());
    for (i, &t) in s.tags.iter().enumerate() {
        if index.insert(t, i as u32).is_some() {
            return Err(bad("$Nodes", format!("node tag {t} appears twice")));
        }
    }
    if s.cells.is_empty() {
        return Err(bad(
            "$Elements",
            "no triangles or quadrangles: a 2-D mesh is expected".into(),
        ));
    }
    let node = |tag: u64, element: u64| {
        index.get(&tag).copied().ok_or_else(|| {
            bad(
                "$Elements",
                format!("element {element} names node {tag}, which $Nodes does not have"),
            )
        })
    };
    let mut mesh = GmshMesh {
        coords: s.coords,
        node_tags: s.tags,
        cell_start: vec![0],
        physical_names: s.names,
        ..GmshMesh::default()
    };
    for (tag, nodes) in &s.cells {
        let mut cell: Vec<u32> = nodes.iter().map(|&n| node(n, *tag)).collect::<Result<_>>()?;
        if let Some(k) = (1..cell.len()).find(|&k| cell[..k].contains(&cell[k])) {
            return Err(bad(
                "$Elements",
                format!(
                    "element {tag} names node {} twice: its sides would not be edges",
                    nodes[k]
                ),
            ));
        }
        let area = twice_area(&mesh.coords, &cell);
        // Coordinates near f64::MAX can overflow the area to NaN or
        // infinity, whose sign says nothing of the orientation.
        if area == 0.0 || !area.is_finite() {
            return Err(bad(
                "$Elements",
                format!("element {tag} has no finite, non-zero area in the x-y plane (a 2-D mesh in the x-y plane is expected)"),
            ));
        }
        if area < 0.0 {
            cell.reverse();
        }
        mesh.cell_nodes.extend(&cell);
        mesh.cell_start.push(mesh.cell_nodes.len());
    }
    for (entity, [a, b]) in &s.lines {
        let line = [node(*a, 0)?, node(*b, 0)?];
        mesh.lines.push(line);
        mesh.line_groups.push(s.groups.get(&(1, *entity)).copied().unwrap_or(0));
    }
    Ok(mesh)
}
