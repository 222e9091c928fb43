//! Writing a 2-D mesh as Gmsh `.msh` 4.1 ASCII: one surface holding every
//! node and cell, one curve per physical group of lines. Coordinates are
//! written in Rust's shortest exact form, so they read back bit for bit.

use std::fmt::Write as _;
use std::path::Path;

use op2_core::{Error, Result};

use crate::GmshMesh;

/// Writes `mesh` to `path` (format 4.1, ASCII). Triangles are written
/// before quadrilaterals (one block each), so a mixed mesh reads back with
/// its cells in that order; nodes keep their order and tags.
pub fn write_msh(path: impl AsRef<Path>, mesh: &GmshMesh) -> Result<()> {
    let path = path.as_ref();
    let io = |e: std::io::Error| Error::mesh_file(path, "/", format!("cannot write: {e}"));
    // What would be written wrong, dropped, or read back as an error.
    if let Some(why) = mesh.problem() {
        return Err(Error::mesh_file(path, "/", format!("cannot write this mesh: {why}")));
    }
    let tags: Vec<u64> = match mesh.node_tags.len() == mesh.coords.len() {
        true => mesh.node_tags.clone(),
        false => (1..=mesh.coords.len() as u64).collect(),
    };
    // One curve entity per line group, numbered from 1 in order of first use.
    let mut groups: Vec<i32> = Vec::new();
    for g in &mesh.line_groups {
        if !groups.contains(g) {
            groups.push(*g);
        }
    }
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for p in &mesh.coords {
        for d in 0..3 {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        }
    }
    if mesh.coords.is_empty() {
        (lo, hi) = ([0.0; 3], [0.0; 3]);
    }
    let bbox = format!("{} {} {} {} {} {}", lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
    let mut out = String::from("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n");
    if !mesh.physical_names.is_empty() {
        let _ = writeln!(out, "$PhysicalNames\n{}", mesh.physical_names.len());
        for (d, t, name) in &mesh.physical_names {
            let _ = writeln!(out, "{d} {t} \"{name}\"");
        }
        out.push_str("$EndPhysicalNames\n");
    }
    let surface_group = mesh.physical_names.iter().find(|g| g.0 == 2).map(|g| g.1);
    let _ = writeln!(out, "$Entities\n0 {} 1 0", groups.len());
    // An entity's physical tags: their count, then the tags.
    let physical = |g: Option<i32>| g.map_or("0".to_string(), |g| format!("1 {g}"));
    for (k, &g) in groups.iter().enumerate() {
        let _ = writeln!(out, "{} {bbox} {} 0", k + 1, physical(Some(g).filter(|&g| g != 0)));
    }
    let _ = writeln!(out, "1 {bbox} {} 0", physical(surface_group));
    out.push_str("$EndEntities\n");
    let n = mesh.coords.len();
    let (min, max) = (
        tags.iter().min().copied().unwrap_or(0),
        tags.iter().max().copied().unwrap_or(0),
    );
    let _ = writeln!(out, "$Nodes\n1 {n} {min} {max}\n2 1 0 {n}");
    for t in &tags {
        let _ = writeln!(out, "{t}");
    }
    for p in &mesh.coords {
        let _ = writeln!(out, "{} {} {}", p[0], p[1], p[2]);
    }
    out.push_str("$EndNodes\n");
    // Blocks: the lines of each curve, then triangles, then quadrilaterals.
    let by_arity = |a: usize| (0..mesh.ncell()).filter(move |&c| mesh.cell(c).len() == a);
    let (tris, quads) = (by_arity(3).count(), by_arity(4).count());
    let mut blocks = String::new();
    let mut tag = 0u64;
    for (k, g) in groups.iter().enumerate() {
        let lines: Vec<&[u32; 2]> = (mesh.lines.iter().zip(&mesh.line_groups))
            .filter(|(_, lg)| *lg == g)
            .map(|(l, _)| l)
            .collect();
        let _ = writeln!(blocks, "1 {} 1 {}", k + 1, lines.len());
        for l in lines {
            tag += 1;
            let _ = writeln!(blocks, "{tag} {} {}", tags[l[0] as usize], tags[l[1] as usize]);
        }
    }
    let mut nblocks = groups.len();
    for (arity, kind, count) in [(3, 2, tris), (4, 3, quads)] {
        if count == 0 {
            continue;
        }
        nblocks += 1;
        let _ = writeln!(blocks, "2 1 {kind} {count}");
        for c in by_arity(arity) {
            tag += 1;
            let _ = write!(blocks, "{tag}");
            for &v in mesh.cell(c) {
                let _ = write!(blocks, " {}", tags[v as usize]);
            }
            blocks.push('\n');
        }
    }
    let _ = writeln!(out, "$Elements\n{nblocks} {tag} {} {tag}", tag.min(1));
    out.push_str(&blocks);
    out.push_str("$EndElements\n");
    std::fs::write(path, out).map_err(io)
}
