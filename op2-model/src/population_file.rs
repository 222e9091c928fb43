//! Populations in files: a simulation writes an agent type's agents
//! ([`Simulation::write_population`]) and a simulation starts from such a
//! file ([`Agents::read`]), as CSV (a header `id,<variable>` or
//! `<variable>[c]` per component, then a line per agent) or JSON lines
//! (`{"id":N,"<variable>":x or [x, y, ...]}`), by the file's extension.
//! Values are written as the shortest text that parses back to the same
//! bits, so a population read back is exactly the one written.

use std::path::Path;

use op2_core::{Error, Result};

use crate::typed::{format_value, parse_value};
use crate::{Agents, Model, Simulation};

/// Whether `path` names JSON lines (`.json`, `.jsonl`) rather than CSV.
fn is_json(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("json" | "jsonl"))
}

fn input_error(path: &Path, line: usize, reason: String) -> Error {
    Error::InputFile {
        path: path.to_path_buf(),
        line,
        reason,
    }
}

impl Simulation<'_> {
    /// Writes the agents of type `agent` here (in memory order) to `path`:
    /// JSON lines if it ends in `.json` or `.jsonl`, else CSV.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the model has no such type or the
    /// simulation has not started; [`Error::Io`] if the file cannot be
    /// written.
    pub fn write_population(&self, agent: &str, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let (header, rows) = self.population_lines(agent, is_json(path))?;
        write_text(path, &(header + &rows.into_iter().map(|r| r.1).collect::<String>()))
    }

    /// [`Simulation::write_population`] in id order: the same file whatever
    /// the backend, the sorting of agents in memory or (with
    /// `Simulation::write_population_across`) the rank count.
    ///
    /// # Errors
    /// As [`Simulation::write_population`].
    pub fn write_population_by_id(&self, agent: &str, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let (header, mut rows) = self.population_lines(agent, is_json(path))?;
        rows.sort_by_key(|r| r.0);
        write_text(path, &(header + &rows.into_iter().map(|r| r.1).collect::<String>()))
    }

    /// Writes the agents of type `agent` on every rank of `mpi` to `path`,
    /// in id order, as [`Simulation::write_population_by_id`] does: rank
    /// 0 gathers every rank's lines and writes the file, so that it is the
    /// same whatever the rank count. Collective; every rank returns the
    /// same success or failure.
    ///
    /// # Errors
    /// As [`Simulation::write_population`], on any rank; [`Error::Mpi`] if
    /// the lines are too many bytes for one gather (2 GiB).
    #[cfg(feature = "mpi")]
    pub fn write_population_across(&self, agent: &str, path: impl AsRef<Path>, mpi: &op2_mpi::Mpi) -> Result<()> {
        let path = path.as_ref();
        let mine = self.population_lines(agent, is_json(path)).map(|(header, mut rows)| {
            rows.sort_by_key(|r| r.0);
            let ids: Vec<u8> = rows.iter().flat_map(|r| r.0.to_le_bytes()).collect();
            (header, ids, rows.into_iter().map(|r| r.1).collect::<String>())
        });
        let mut failed = vec![0u64; mpi.size()];
        failed[mpi.rank()] = u64::from(mine.is_err());
        mpi.sum_u64(&mut failed);
        let first_failed = failed.iter().position(|&f| f != 0);
        let (header, ids, lines) = match (mine, first_failed) {
            (Err(e), _) => return Err(e),
            (Ok(_), Some(r)) => return Err(rank_failed(path, r)),
            (Ok(m), None) => m,
        };
        let ids = mpi.gather_bytes(&ids)?;
        let lines = mpi.gather_bytes(lines.as_bytes())?;
        let written = match (ids, lines) {
            (Some(ids), Some(lines)) => write_text(path, &(header + &merge_in_id_order(&ids, &lines))),
            _ => Ok(()),
        };
        let mut failed = [u64::from(written.is_err())];
        mpi.sum_u64(&mut failed);
        match (written, failed[0]) {
            (Err(e), _) => Err(e),
            (Ok(()), 0) => Ok(()),
            (Ok(()), _) => Err(rank_failed(path, 0)),
        }
    }

    /// The header (empty for JSON lines) and a line per agent here, with
    /// its id, in memory order.
    fn population_lines(&self, agent: &str, json: bool) -> Result<(String, Vec<(u64, String)>)> {
        let set = self.population(agent)?;
        let a = self.model().agent(agent).expect("population() checked the type");
        // This rank's own agents: a cut network's set holds halo copies
        // after them, which their owners write.
        let ids = &set.try_global_ids()?[..set.size()];
        let mut columns = Vec::new();
        for v in a.variables() {
            let dat = self.any_variable(agent, v.name())?;
            columns.push((v, dat.to_bytes()?));
        }
        let mut header = String::new();
        if !json {
            header += "id";
            for (v, _) in &columns {
                for c in 0..v.dim() {
                    header += &match v.dim() {
                        1 => format!(",{}", v.name()),
                        _ => format!(",{}[{c}]", v.name()),
                    };
                }
            }
            header += "\n";
        }
        let mut rows = Vec::with_capacity(ids.len());
        for (k, &id) in ids.iter().enumerate() {
            let value = |v: &crate::Variable, bytes: &[u8], c: usize| {
                let size = v.scalar().size();
                let at = (k * v.dim() + c) * size;
                format_value(v.scalar(), &bytes[at..at + size])
            };
            let mut text = String::new();
            if json {
                text += &format!("{{\"id\":{id}");
                for (v, bytes) in &columns {
                    let values: Vec<String> = (0..v.dim()).map(|c| json_number(value(v, bytes, c))).collect();
                    text += &match v.dim() {
                        1 => format!(",\"{}\":{}", v.name(), values[0]),
                        _ => format!(",\"{}\":[{}]", v.name(), values.join(",")),
                    };
                }
                text += "}\n";
            } else {
                text += &id.to_string();
                for (v, bytes) in &columns {
                    for c in 0..v.dim() {
                        text += ",";
                        text += &value(v, bytes, c);
                    }
                }
                text += "\n";
            }
            rows.push((id, text));
        }
        Ok((header, rows))
    }
}

fn write_text(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// An error for a failure on another rank.
#[cfg(feature = "mpi")]
fn rank_failed(path: &Path, rank: usize) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        reason: format!("rank {rank} failed to give its agents or write them (its error is in its output)"),
    }
}

/// Every rank's lines (each part's in id order, `ids` as little-endian
/// u64s, a line each) merged into one text in id order.
#[cfg(feature = "mpi")]
fn merge_in_id_order(ids: &[Vec<u8>], lines: &[Vec<u8>]) -> String {
    let mut all: Vec<(u64, &str)> = Vec::new();
    for (ids, lines) in ids.iter().zip(lines) {
        let text = std::str::from_utf8(lines).unwrap_or("");
        let ids = ids
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
        all.extend(ids.zip(text.split_inclusive('\n')));
    }
    all.sort_by_key(|r| r.0);
    all.into_iter().map(|r| r.1).collect()
}

/// A value as a JSON token: NaN and infinities (which JSON lacks) as
/// strings, which [`Agents::read`] reads back.
fn json_number(text: String) -> String {
    match text.as_str() {
        "NaN" | "inf" | "-inf" => format!("\"{text}\""),
        _ => text,
    }
}

impl Agents {
    /// The agents of type `agent` of `model` in the file at `path` (as
    /// [`Simulation::write_population`] writes them; variables the file
    /// lacks take their defaults).
    ///
    /// # Errors
    /// [`Error::InputFile`] naming the line: a column or key the type does
    /// not declare, a missing id, a value that is not one of the variable's
    /// type, a variable of several values given a wrong number of them;
    /// [`Error::InvalidModel`] if the model has no such type.
    pub fn read(model: &Model, agent: &str, path: impl AsRef<Path>) -> Result<Agents> {
        let path = path.as_ref();
        let a = model
            .agent(agent)
            .ok_or_else(|| model.invalid(format!("reads agents of type `{agent}`, which the model does not have")))?;
        let text = std::fs::read_to_string(path).map_err(|e| input_error(path, 0, e.to_string()))?;
        // Per variable, its values as bytes, agent after agent.
        let mut values: Vec<Vec<u8>> = vec![Vec::new(); a.variables().len()];
        let mut given = vec![false; a.variables().len()];
        let mut ids = Vec::new();
        let variable = |name: &str, line: usize| {
            a.variables().iter().position(|v| v.name() == name).ok_or_else(|| {
                input_error(
                    path,
                    line,
                    format!("`{name}` is not a variable of agent type `{agent}`"),
                )
            })
        };
        if is_json(path) {
            for (k, raw) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let line = k + 1;
                let fields = parse_json_line(raw).map_err(|reason| input_error(path, line, reason))?;
                let mut id = None;
                let mut seen = vec![false; values.len()];
                for (key, tokens) in fields {
                    if key == "id" {
                        let [token] = &tokens[..] else {
                            return Err(input_error(
                                path,
                                line,
                                format!("`id` has {} values, and an agent has one", tokens.len()),
                            ));
                        };
                        if id.is_some() {
                            return Err(input_error(path, line, "`id` is given twice".to_string()));
                        }
                        id = Some(
                            token
                                .parse::<u64>()
                                .map_err(|_| input_error(path, line, format!("id `{token}` is not a whole number")))?,
                        );
                        continue;
                    }
                    let i = variable(&key, line)?;
                    let v = &a.variables()[i];
                    if seen[i] {
                        return Err(input_error(path, line, format!("`{key}` is given twice")));
                    }
                    if tokens.len() != v.dim() {
                        return Err(input_error(
                            path,
                            line,
                            format!("`{key}` has {} values, and {} were given", v.dim(), tokens.len()),
                        ));
                    }
                    for t in tokens {
                        values[i].extend(parse_token(v, &t).map_err(|r| input_error(path, line, r))?);
                    }
                    seen[i] = true;
                }
                ids.push(id.ok_or_else(|| input_error(path, line, "no \"id\"".to_string()))?);
                check_same_variables(&mut given, &seen, ids.len(), path, line)?;
            }
        } else {
            let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
            let Some((_, header)) = lines.next() else {
                return Ok(Agents::with_ids(Vec::new()));
            };
            // Per column: the variable and component it holds (None: the id).
            let mut columns = Vec::new();
            for name in header.split(',').map(str::trim) {
                if name == "id" {
                    columns.push(None);
                    continue;
                }
                let (base, c) = match name.split_once('[') {
                    Some((b, rest)) => (b, rest.trim_end_matches(']').parse::<usize>().ok()),
                    None => (name, Some(0)),
                };
                let i = variable(base, 1)?;
                let dim = a.variables()[i].dim();
                match c {
                    Some(c) if c < dim && (dim > 1) == name.contains('[') => columns.push(Some((i, c))),
                    _ => {
                        return Err(input_error(
                            path,
                            1,
                            format!("column `{name}`: `{base}` has {dim} values"),
                        ))
                    }
                }
            }
            if columns.iter().filter(|c| c.is_none()).count() != 1 {
                return Err(input_error(path, 1, "the header needs one `id` column".to_string()));
            }
            for (i, v) in a.variables().iter().enumerate() {
                let n = columns.iter().filter(|c| matches!(c, Some((j, _)) if *j == i)).count();
                given[i] = n > 0;
                if n != 0 && n != v.dim() {
                    return Err(input_error(
                        path,
                        1,
                        format!("`{}` has {} values, and {n} columns", v.name(), v.dim()),
                    ));
                }
            }
            for (k, raw) in lines {
                let line = k + 1;
                let cells: Vec<&str> = raw.split(',').collect();
                if cells.len() != columns.len() {
                    return Err(input_error(
                        path,
                        line,
                        format!("{} values, and the header has {} columns", cells.len(), columns.len()),
                    ));
                }
                let mut row: Vec<Vec<Option<Vec<u8>>>> = a.variables().iter().map(|v| vec![None; v.dim()]).collect();
                for (cell, col) in cells.iter().zip(&columns) {
                    match col {
                        None => ids.push(
                            cell.trim()
                                .parse::<u64>()
                                .map_err(|_| input_error(path, line, format!("id `{cell}` is not a whole number")))?,
                        ),
                        Some((i, c)) => {
                            let v = &a.variables()[*i];
                            row[*i][*c] = Some(parse_token(v, cell).map_err(|r| input_error(path, line, r))?);
                        }
                    }
                }
                for (i, comps) in row.into_iter().enumerate() {
                    for b in comps.into_iter().flatten() {
                        values[i].extend(b);
                    }
                }
            }
        }
        let mut agents = Agents::with_ids(ids);
        for (i, v) in a.variables().iter().enumerate() {
            if given[i] {
                agents
                    .values
                    .push((v.name().to_string(), v.scalar(), std::mem::take(&mut values[i])));
            }
        }
        Ok(agents)
    }
}

/// Every line of a JSON lines file gives the same variables.
fn check_same_variables(given: &mut [bool], seen: &[bool], agents: usize, path: &Path, line: usize) -> Result<()> {
    if agents == 1 {
        given.copy_from_slice(seen);
    } else if given != seen {
        return Err(input_error(
            path,
            line,
            "gives other variables than the first line".to_string(),
        ));
    }
    Ok(())
}

/// One value of `v` written as `token` (a number, or a quoted NaN or
/// infinity), as bytes.
fn parse_token(v: &crate::Variable, token: &str) -> std::result::Result<Vec<u8>, String> {
    let t = token.trim().trim_matches('"');
    parse_value(v.scalar(), t)
        .ok_or_else(|| format!("`{t}` is not a value of `{}` ({})", v.name(), v.scalar().rust_name()))
}

/// The fields of a flat JSON object: `(key, value tokens)`, a number or
/// string being one token, an array of them several.
fn parse_json_line(line: &str) -> std::result::Result<Vec<(String, Vec<String>)>, String> {
    let body = line.trim();
    let body = body
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .ok_or("expected one JSON object on the line")?;
    let mut fields = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        let r = rest.strip_prefix('"').ok_or("expected a quoted key")?;
        let end = r.find('"').ok_or("a key is not closed")?;
        let key = r[..end].to_string();
        let r = r[end + 1..]
            .trim_start()
            .strip_prefix(':')
            .ok_or("expected `:` after a key")?
            .trim_start();
        let (tokens, r) = match r.strip_prefix('[') {
            Some(inner) => {
                let end = inner.find(']').ok_or("an array is not closed")?;
                let tokens = inner[..end].split(',').map(|t| t.trim().to_string()).collect();
                (tokens, &inner[end + 1..])
            }
            None => {
                let end = r.find(',').unwrap_or(r.len());
                (vec![r[..end].trim().to_string()], &r[end..])
            }
        };
        fields.push((key, tokens));
        rest = r.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    Ok(fields)
}
