//! VTK XML PolyData: a Set's elements as points, its Dats as point data,
//! in VTK's inline binary format (exact, and a third of ASCII's size for
//! doubles); a `.pvd` collection makes a run a time series in ParaView,
//! and a distributed run writes a piece per process with a `.pvtp` index
//! per step.

use std::path::{Path, PathBuf};

use op2_core::{Error, Result};

use crate::field::{by_id, check_fields, Field};
use crate::file::write_file;
use crate::xml::{
    check_names, check_positions, escape, field_array, file_open, int_array, p_data_arrays, p_points_and_pieces,
    points, unescape, GLOBAL_ID,
};

/// Writes the elements of the positions' set that this process owns as a
/// VTK XML PolyData file (`.vtp`): one vertex per element at `positions`
/// (2 or 3 components; z = 0 in 2-D), in global-id order, with the point data
/// `global_id` (the global ids, Int64) and every Dat of `fields` (same set,
/// any number of components).
///
/// # Errors
/// [`Error::InvalidOption`] if `positions` has neither 2 nor 3 components,
/// a field lives on another set, or two fields (or one and `global_id`)
/// share a name; [`Error::HostBorrow`] if a Dat is
/// mutably borrowed; [`Error::Io`] if the file cannot be written.
pub fn write_vtp(path: impl AsRef<Path>, positions: &dyn Field, fields: &[&dyn Field]) -> Result<()> {
    let text = vtp_text(positions, fields)?;
    write_file(path.as_ref(), text.as_bytes())
}

fn vtp_text(positions: &dyn Field, fields: &[&dyn Field]) -> Result<String> {
    let set = positions.set();
    check_positions(positions)?;
    check_fields(set, fields, "a VTK file")?;
    check_names(fields, "a VTK file's point data")?;
    let order = by_id(set);
    let n = order.len();
    let mut out = String::with_capacity(32 * n + 1024);
    file_open(&mut out, "PolyData");
    out.push_str("<PolyData>\n");
    out.push_str(&format!(
        "<Piece NumberOfPoints=\"{n}\" NumberOfVerts=\"{n}\" NumberOfLines=\"0\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n"
    ));
    out.push_str("<PointData>\n");
    int_array(&mut out, GLOBAL_ID, order.iter().map(|&(id, _)| id));
    for f in fields {
        field_array(&mut out, *f, order.iter().map(|&(_, e)| e))?;
    }
    out.push_str("</PointData>\n");
    points(&mut out, positions, order.iter().map(|&(_, e)| e))?;
    out.push_str("<Verts>\n");
    int_array(&mut out, "connectivity", 0..n as u64);
    int_array(&mut out, "offsets", 1..=n as u64);
    out.push_str("</Verts>\n</Piece>\n</PolyData>\n</VTKFile>\n");
    Ok(out)
}

/// Writes the index of points written in pieces, one `.vtp` per process
/// ([`write_vtp`] with the same Dats on each): a VTK XML PPolyData
/// (`.pvtp`) that ParaView opens as one data set. `pieces` are the
/// pieces' paths relative to the index's directory, in rank order.
///
/// # Errors
/// [`Error::InvalidOption`] if there is no piece, `positions` have neither
/// 2 nor 3 components, or two fields share a name (no value is read);
/// [`Error::Io`] if the file cannot be written.
pub fn write_pvtp(
    path: impl AsRef<Path>,
    pieces: &[String],
    positions: &dyn Field,
    fields: &[&dyn Field],
) -> Result<()> {
    if pieces.is_empty() {
        return Err(Error::InvalidOption {
            option: "VTK pieces",
            reason: "a parallel VTK file lists at least one piece".into(),
        });
    }
    check_positions(positions)?;
    check_names(fields, "a VTK file's point data")?;
    let mut out = String::new();
    file_open(&mut out, "PPolyData");
    out.push_str("<PPolyData GhostLevel=\"0\">\n<PPointData>\n");
    p_data_arrays(&mut out, fields);
    out.push_str("</PPointData>\n");
    p_points_and_pieces(&mut out, positions, pieces);
    out.push_str("</PPolyData>\n</VTKFile>\n");
    write_file(path.as_ref(), out.as_bytes())
}

/// A run written for ParaView: [`VtkSeries::write`] puts one `.vtp` file per
/// step in a directory, `<name>_<step>.vtp`, and rewrites `<name>.pvd`, the
/// collection that lists them with their times (open it in ParaView to play
/// the run). A series of a distributed run ([`VtkSeries::in_pieces`]) has
/// each process write its piece, `<name>_<step>_<rank>.vtp`, and rank 0 the
/// step's index `<name>_<step>.pvtp` and the collection of the indices.
pub struct VtkSeries {
    dir: PathBuf,
    name: String,
    steps: Vec<(f64, String)>,
    /// `(rank, ranks)` of a series written in pieces.
    pieces: Option<(usize, usize)>,
}

impl VtkSeries {
    /// A series of files `<dir>/<name>_<step>.vtp` (creating `dir`).
    ///
    /// # Errors
    /// [`Error::Io`] if the directory cannot be created;
    /// [`Error::InvalidOption`] if `name` is empty or holds a path separator.
    pub fn new(dir: impl Into<PathBuf>, name: &str) -> Result<VtkSeries> {
        let dir = dir.into();
        if name.is_empty() || name.contains(['/', '\\']) {
            return Err(Error::InvalidOption {
                option: "VTK series name",
                reason: format!("{name:?} is not a file name"),
            });
        }
        std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
            path: dir.clone(),
            reason: e.to_string(),
        })?;
        Ok(VtkSeries {
            dir,
            name: name.to_string(),
            steps: Vec::new(),
            pieces: None,
        })
    }

    /// A series written by process `rank` of `ranks` (each writing the
    /// elements it owns); on one process, as [`VtkSeries::new`].
    ///
    /// # Errors
    /// As [`VtkSeries::new`]; [`Error::InvalidOption`] if `rank` is not
    /// below `ranks`.
    pub fn in_pieces(dir: impl Into<PathBuf>, name: &str, rank: usize, ranks: usize) -> Result<VtkSeries> {
        if rank >= ranks {
            return Err(Error::InvalidOption {
                option: "VTK pieces",
                reason: format!("rank {rank} of {ranks}"),
            });
        }
        let mut series = VtkSeries::new(dir, name)?;
        series.pieces = (ranks > 1).then_some((rank, ranks));
        Ok(series)
    }

    /// The same series continued by a run resumed at step `step`: the steps
    /// before it that the folder's collection already lists stay listed
    /// (their files are the run's up to there), the others go. A fresh run
    /// (`step` 0) lists only what it writes.
    pub fn resumed_at(mut self, step: u64) -> VtkSeries {
        let Ok(pvd) = std::fs::read_to_string(self.collection()) else {
            return self;
        };
        let attribute = |line: &str, key: &str| -> Option<String> {
            let rest = &line[line.find(&format!(" {key}=\""))? + key.len() + 3..];
            Some(unescape(&rest[..rest.find('"')?]))
        };
        let step_of = |file: &str| -> Option<u64> {
            let rest = file.strip_prefix(&self.name)?.strip_prefix('_')?;
            rest.split(['.', '_']).next()?.parse().ok()
        };
        self.steps = pvd
            .lines()
            .filter(|l| l.trim_start().starts_with("<DataSet "))
            .filter_map(|l| Some((attribute(l, "timestep")?.parse().ok()?, attribute(l, "file")?)))
            .filter(|(_, file): &(f64, String)| step_of(file).is_some_and(|k| k < step))
            .collect();
        self
    }

    /// Writes step `step` at time `time` ([`write_vtp`]) and the updated
    /// collection; returns the step's file (this process's piece, in a
    /// series in pieces, whose index rank 0 writes with the collection).
    ///
    /// # Errors
    /// As [`write_vtp`], and [`Error::Io`] if the collection cannot be written.
    pub fn write(&mut self, step: u64, time: f64, positions: &dyn Field, fields: &[&dyn Field]) -> Result<PathBuf> {
        let (file, path) = match self.pieces {
            None => {
                let file = format!("{}_{step:06}.vtp", self.name);
                let path = self.dir.join(&file);
                write_vtp(&path, positions, fields)?;
                (file, path)
            }
            Some((rank, ranks)) => {
                let piece = |r: usize| format!("{}_{step:06}_{r}.vtp", self.name);
                let path = self.dir.join(piece(rank));
                write_vtp(&path, positions, fields)?;
                if rank != 0 {
                    return Ok(path);
                }
                let file = format!("{}_{step:06}.pvtp", self.name);
                let pieces: Vec<String> = (0..ranks).map(piece).collect();
                write_pvtp(self.dir.join(&file), &pieces, positions, fields)?;
                (file, path)
            }
        };
        self.steps.retain(|(_, f)| *f != file);
        self.steps.push((time, file));
        let mut pvd =
            String::from("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n<Collection>\n");
        for (t, f) in &self.steps {
            pvd.push_str(&format!(
                "<DataSet timestep=\"{t}\" part=\"0\" file=\"{}\"/>\n",
                escape(f)
            ));
        }
        pvd.push_str("</Collection>\n</VTKFile>\n");
        write_file(&self.collection(), pvd.as_bytes())?;
        Ok(path)
    }

    /// The collection file, `<dir>/<name>.pvd`.
    pub fn collection(&self) -> PathBuf {
        self.dir.join(format!("{}.pvd", self.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use op2_core::{Dat, Set};
    use vtkio::model::{Attribute, DataSet, IOBuffer};

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("op2-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// The file read back with vtkio (an independent reader): points, and
    /// each point-data array by name.
    fn read_back(path: &Path) -> (Vec<f64>, Vec<(String, usize, IOBuffer)>) {
        let vtk = vtkio::Vtk::import(path).expect("vtkio reads the file");
        let DataSet::PolyData { pieces, .. } = vtk.data else {
            panic!("not PolyData")
        };
        let piece = pieces[0].load_piece_data(None).expect("an inline piece");
        let points: Vec<f64> = piece.points.cast_into().expect("numeric points");
        let arrays = piece
            .data
            .point
            .into_iter()
            .map(|a| match a {
                Attribute::DataArray(d) => {
                    let n = match d.elem {
                        vtkio::model::ElementType::Generic(n) => n as usize,
                        vtkio::model::ElementType::Scalars { num_comp, .. } => num_comp as usize,
                        other => panic!("unexpected element type {other:?}"),
                    };
                    (d.name, n, d.data)
                }
                other => panic!("unexpected attribute {other:?}"),
            })
            .collect();
        (points, arrays)
    }

    #[test]
    fn points_and_fields_read_back_with_vtkio() {
        let agents = Set::with_global_ids("agents", vec![9, 2, 5]).unwrap();
        let pos = Dat::from_vec(
            "pos",
            &agents,
            3,
            vec![1.0f32, 2.0, 3.0, 0.5, -1.0, 7.25, 0.0, 0.0, 1e-7],
        )
        .unwrap();
        let energy = Dat::from_vec("energy", &agents, 1, vec![10i32, 20, 30]).unwrap();
        let vel = Dat::from_vec("v<el>", &agents, 2, vec![0.1f64, 0.2, 0.3, 0.4, 0.5, 0.6]).unwrap();
        let dir = temp_dir("vtp");
        let mut series = VtkSeries::new(&dir, "agents").unwrap();
        let path = series.write(3, 0.75, &pos, &[&energy, &vel]).unwrap();
        assert_eq!(path, dir.join("agents_000003.vtp"));
        let (points, arrays) = read_back(&path);
        // Global-id order: ids 2, 5, 9 are elements 1, 2, 0.
        let want: Vec<f64> = [0.5f32, -1.0, 7.25, 0.0, 0.0, 1e-7, 1.0, 2.0, 3.0]
            .iter()
            .map(|&v| v as f64)
            .collect();
        assert_eq!(points, want);
        let names: Vec<&str> = arrays.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, ["global_id", "energy", "v<el>"]);
        assert_eq!(arrays[0].2.clone().cast_into::<i64>().unwrap(), [2, 5, 9]);
        assert_eq!(arrays[1].2.clone().cast_into::<i32>().unwrap(), [20, 30, 10]);
        assert_eq!(arrays[2].1, 2);
        assert_eq!(
            arrays[2].2.clone().cast_into::<f64>().unwrap(),
            [0.3, 0.4, 0.5, 0.6, 0.1, 0.2]
        );
        let pvd = std::fs::read_to_string(series.collection()).unwrap();
        assert!(
            pvd.contains("<DataSet timestep=\"0.75\" part=\"0\" file=\"agents_000003.vtp\"/>"),
            "{pvd}"
        );
        series.write(4, 1.0, &pos, &[]).unwrap();
        let pvd = std::fs::read_to_string(series.collection()).unwrap();
        assert_eq!(pvd.matches("<DataSet ").count(), 2, "{pvd}");
        // A run resumed at step 4 keeps step 3 and writes 4 and 6 anew; a
        // fresh run keeps nothing.
        series.write(5, 1.25, &pos, &[]).unwrap();
        let mut resumed = VtkSeries::new(&dir, "agents").unwrap().resumed_at(4);
        resumed.write(4, 1.0, &pos, &[]).unwrap();
        resumed.write(6, 1.5, &pos, &[]).unwrap();
        let pvd = std::fs::read_to_string(series.collection()).unwrap();
        let files: Vec<&str> = pvd.lines().filter_map(|l| l.split("file=\"").nth(1)).collect();
        assert_eq!(
            files,
            [
                "agents_000003.vtp\"/>",
                "agents_000004.vtp\"/>",
                "agents_000006.vtp\"/>"
            ],
            "{pvd}"
        );
        assert!(pvd.contains("timestep=\"0.75\""), "{pvd}");
        let mut fresh = VtkSeries::new(&dir, "agents").unwrap().resumed_at(0);
        fresh.write(0, 0.0, &pos, &[]).unwrap();
        let pvd = std::fs::read_to_string(series.collection()).unwrap();
        assert_eq!(pvd.matches("<DataSet ").count(), 1, "{pvd}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_series_in_pieces_reads_back_as_one_with_vtkio() {
        let dir = temp_dir("pvtp");
        // Two processes, each with its agents (ids 2k + rank).
        for rank in 0..2u64 {
            let agents = Set::with_global_ids("agents", vec![4 + rank, rank]).unwrap();
            let pos = Dat::from_vec("pos", &agents, 2, vec![1.0f64, rank as f64, 0.0, rank as f64]).unwrap();
            let mass = Dat::from_vec("mass", &agents, 1, vec![10 + rank as i32, rank as i32]).unwrap();
            let mut series = VtkSeries::in_pieces(&dir, "agents", rank as usize, 2).unwrap();
            let piece = series.write(7, 0.5, &pos, &[&mass]).unwrap();
            assert_eq!(piece, dir.join(format!("agents_000007_{rank}.vtp")));
        }
        let pvd = std::fs::read_to_string(dir.join("agents.pvd")).unwrap();
        assert!(pvd.contains("file=\"agents_000007.pvtp\""), "{pvd}");
        let index = dir.join("agents_000007.pvtp");
        let vtk = vtkio::Vtk::import(&index).expect("vtkio reads the index");
        let DataSet::PolyData { pieces, .. } = vtk.data else {
            panic!("not PolyData")
        };
        assert_eq!(pieces.len(), 2);
        for (rank, piece) in pieces.iter().enumerate() {
            let piece = piece.load_piece_data(Some(&index)).expect("the piece loads");
            let points: Vec<f64> = piece.points.cast_into().unwrap();
            assert_eq!(
                points,
                [0.0, rank as f64, 0.0, 1.0, rank as f64, 0.0],
                "piece {rank}, in id order"
            );
            let Attribute::DataArray(ids) = &piece.data.point[0] else {
                panic!("point data")
            };
            assert_eq!(ids.name, "global_id");
            assert_eq!(
                ids.data.clone().cast_into::<i64>().unwrap(),
                [rank as i64, 4 + rank as i64]
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn arrays_named_alike_are_refused() {
        let agents = Set::new("agents", 1).unwrap();
        let pos = Dat::from_vec("pos", &agents, 2, vec![0.0f64; 2]).unwrap();
        let id = Dat::from_vec("global_id", &agents, 1, vec![1i64]).unwrap();
        let a = Dat::from_vec("a", &agents, 1, vec![1i32]).unwrap();
        let dir = temp_dir("names");
        std::fs::create_dir_all(&dir).unwrap();
        for fields in [vec![&id as &dyn Field], vec![&a as &dyn Field, &a]] {
            let e = write_vtp(dir.join("x.vtp"), &pos, &fields).unwrap_err().to_string();
            assert!(e.contains("two arrays would be named"), "{e}");
            let e = write_pvtp(dir.join("x.pvtp"), &["x.vtp".into()], &pos, &fields).unwrap_err();
            assert!(e.to_string().contains("distinct names"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn positions_in_2d_get_z_zero() {
        let cells = Set::new("cells", 2).unwrap();
        let xy = Dat::from_vec("xy", &cells, 2, vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
        let dir = temp_dir("vtp2d");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("flat.vtp");
        write_vtp(&path, &xy, &[]).unwrap();
        assert_eq!(read_back(&path).0, [1.0, 2.0, 0.0, 3.0, 4.0, 0.0]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_output_is_an_error() {
        let cells = Set::new("cells", 2).unwrap();
        let line = Dat::from_vec("line", &cells, 1, vec![1.0f64, 2.0]).unwrap();
        let dir = temp_dir("bad");
        std::fs::create_dir_all(&dir).unwrap();
        let e = write_vtp(dir.join("x.vtp"), &line, &[]).unwrap_err();
        assert!(
            e.to_string().contains("`line` has 1 components; positions have 2 or 3"),
            "{e}"
        );
        let other = Set::new("other", 2).unwrap();
        let xy = Dat::from_vec("xy", &other, 2, vec![0.0f64; 4]).unwrap();
        let e = write_vtp(dir.join("x.vtp"), &xy, &[&line]).unwrap_err();
        assert!(
            e.to_string()
                .contains("Dat `line` lives on set `cells`, not on `other`"),
            "{e}"
        );
        assert!(VtkSeries::new(&dir, "a/b").is_err());
        let e = VtkSeries::in_pieces(&dir, "pieces", 2, 2)
            .err()
            .expect("rank 2 of 2 is refused");
        assert!(e.to_string().contains("rank 2 of 2"), "{e}");
        assert!(VtkSeries::new(&dir, "").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
