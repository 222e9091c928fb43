//! A graph named on a command line (`--graph grid:64x64`): a family and its
//! parameters, or a file to read.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use op2_core::{Error, Result};

use crate::generate::{self, check_barabasi_albert, check_complete, check_grid, check_watts_strogatz};
use crate::{read_edge_list, read_matrix_market, EdgeList};

/// The forms [`GraphSpec::parse`] accepts, for messages.
const FORMS: &str = "`grid:WxH`, `complete:N`, `edges:FILE`, `mtx:FILE`, `ba:N,M` or `ws:N,K,BETA`";

/// A graph as a short text, for command lines: a generated family with its
/// parameters, or a file.
///
/// | spec | graph |
/// |---|---|
/// | `grid:WxH` | [`generate::grid`]`(W, H)`: a `W` by `H` grid, 4 neighbours |
/// | `complete:N` | [`generate::complete`]`(N)` |
/// | `edges:FILE` | [`read_edge_list`]`(FILE)`: a SNAP-style edge list |
/// | `mtx:FILE` | [`read_matrix_market`]`(FILE)`: a Matrix Market file |
/// | `ba:N,M` | [`generate::barabasi_albert`]`(N, M, seed)` |
/// | `ws:N,K,BETA` | [`generate::watts_strogatz`]`(N, K, BETA, seed)` |
///
/// `FILE` is everything after the first `:`. [`GraphSpec::build`] makes the
/// graph; [`fmt::Display`] writes the spec back in the form it parses from.
///
/// ```
/// use op2_graph::{generate, GraphSpec};
///
/// let spec = GraphSpec::parse("ws:100,4,0.25")?;
/// assert_eq!(spec, GraphSpec::WattsStrogatz { n: 100, k: 4, beta: 0.25 });
/// assert_eq!(spec.build(7)?, generate::watts_strogatz(100, 4, 0.25, 7)?);
/// assert_eq!(spec.to_string(), "ws:100,4,0.25");
///
/// let e = GraphSpec::parse("ba:10").unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "invalid runtime option `graph`: `ba:10`: expected `ba:N,M` \
///      (N nodes, each new one joined to M earlier ones)"
/// );
/// # Ok::<(), op2_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum GraphSpec {
    /// `grid:WxH`: the `width` by `height` grid.
    Grid {
        /// Nodes per row.
        width: usize,
        /// Rows.
        height: usize,
    },
    /// `complete:N`: the complete graph on `n` nodes.
    Complete {
        /// Nodes.
        n: usize,
    },
    /// `edges:FILE`: a SNAP-style edge list file.
    EdgeFile(PathBuf),
    /// `mtx:FILE`: a Matrix Market coordinate file.
    MatrixMarket(PathBuf),
    /// `ba:N,M`: a Barabási-Albert graph.
    BarabasiAlbert {
        /// Nodes.
        n: usize,
        /// Edges from each new node.
        m: usize,
    },
    /// `ws:N,K,BETA`: a Watts-Strogatz graph.
    WattsStrogatz {
        /// Nodes.
        n: usize,
        /// Lattice neighbours of each node (even).
        k: usize,
        /// Probability of rewiring each edge.
        beta: f64,
    },
}

impl GraphSpec {
    /// Parses a spec (surrounding whitespace ignored) and checks its
    /// parameters as the generator will, so that a bad one is reported
    /// before anything is built or read.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] for option `graph`, quoting the spec and
    /// saying what was expected: the forms, when the family is missing or
    /// unknown; the family's form, when its parameters do not parse; the
    /// accepted range, when a parameter is outside it.
    pub fn parse(spec: &str) -> Result<GraphSpec> {
        let text = spec.trim();
        let invalid = |reason: String| Error::InvalidOption {
            option: "graph",
            reason: format!("`{text}`: {reason}"),
        };
        let Some((family, params)) = text.split_once(':') else {
            return Err(invalid(format!("expected a graph spec: {FORMS}")));
        };
        let (form, meaning) = match family {
            "grid" => ("grid:WxH", "W nodes per row, H rows"),
            "complete" => ("complete:N", "N nodes"),
            "edges" => ("edges:FILE", "a SNAP-style edge list"),
            "mtx" => ("mtx:FILE", "a Matrix Market file"),
            "ba" => ("ba:N,M", "N nodes, each new one joined to M earlier ones"),
            "ws" => (
                "ws:N,K,BETA",
                "N nodes, K lattice neighbours, rewired with probability BETA",
            ),
            _ => return Err(invalid(format!("unknown graph family `{family}`; expected {FORMS}"))),
        };
        let malformed = || invalid(format!("expected `{form}` ({meaning})"));
        let count = |field: &str| field.trim().parse::<usize>().map_err(|_| malformed());
        let spec = match family {
            "grid" => {
                let (w, h) = params.split_once('x').ok_or_else(malformed)?;
                GraphSpec::Grid {
                    width: count(w)?,
                    height: count(h)?,
                }
            }
            "complete" => GraphSpec::Complete { n: count(params)? },
            "edges" | "mtx" => {
                if params.is_empty() {
                    return Err(malformed());
                }
                let path = PathBuf::from(params);
                if family == "edges" {
                    GraphSpec::EdgeFile(path)
                } else {
                    GraphSpec::MatrixMarket(path)
                }
            }
            "ba" => match params.split(',').collect::<Vec<_>>()[..] {
                [n, m] => GraphSpec::BarabasiAlbert {
                    n: count(n)?,
                    m: count(m)?,
                },
                _ => return Err(malformed()),
            },
            _ => match params.split(',').collect::<Vec<_>>()[..] {
                [n, k, beta] => GraphSpec::WattsStrogatz {
                    n: count(n)?,
                    k: count(k)?,
                    beta: beta.trim().parse().map_err(|_| malformed())?,
                },
                _ => return Err(malformed()),
            },
        };
        spec.check().map_err(|e| match e {
            Error::InvalidOption { reason, .. } => invalid(format!("{reason} (the form is `{form}`: {meaning})")),
            other => other,
        })?;
        Ok(spec)
    }

    /// The graph: generated (the random families from `seed`; the others
    /// ignore it) or read from its file.
    ///
    /// # Errors
    /// The generator's [`Error::InvalidOption`] for parameters outside its
    /// ranges (only possible for a spec not made by [`GraphSpec::parse`]);
    /// the reader's [`Error::InputFile`] for a file that cannot be read or
    /// is malformed.
    pub fn build(&self, seed: u64) -> Result<EdgeList> {
        match *self {
            GraphSpec::Grid { width, height } => generate::grid(width, height),
            GraphSpec::Complete { n } => generate::complete(n),
            GraphSpec::EdgeFile(ref path) => read_edge_list(path),
            GraphSpec::MatrixMarket(ref path) => read_matrix_market(path),
            GraphSpec::BarabasiAlbert { n, m } => generate::barabasi_albert(n, m, seed),
            GraphSpec::WattsStrogatz { n, k, beta } => generate::watts_strogatz(n, k, beta, seed),
        }
    }

    /// The generator's parameter checks (none for files).
    fn check(&self) -> Result<()> {
        match *self {
            GraphSpec::Grid { width, height } => check_grid(width, height),
            GraphSpec::Complete { n } => check_complete(n),
            GraphSpec::EdgeFile(_) | GraphSpec::MatrixMarket(_) => Ok(()),
            GraphSpec::BarabasiAlbert { n, m } => check_barabasi_albert(n, m),
            GraphSpec::WattsStrogatz { n, k, beta } => check_watts_strogatz(n, k, beta),
        }
    }
}

/// [`GraphSpec::parse`].
impl FromStr for GraphSpec {
    type Err = Error;

    fn from_str(spec: &str) -> Result<GraphSpec> {
        GraphSpec::parse(spec)
    }
}

/// The spec in the form [`GraphSpec::parse`] reads (a file name that is not
/// UTF-8 is written lossily).
impl fmt::Display for GraphSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphSpec::Grid { width, height } => write!(f, "grid:{width}x{height}"),
            GraphSpec::Complete { n } => write!(f, "complete:{n}"),
            GraphSpec::EdgeFile(path) => write!(f, "edges:{}", path.display()),
            GraphSpec::MatrixMarket(path) => write!(f, "mtx:{}", path.display()),
            GraphSpec::BarabasiAlbert { n, m } => write!(f, "ba:{n},{m}"),
            GraphSpec::WattsStrogatz { n, k, beta } => write!(f, "ws:{n},{k},{beta}"),
        }
    }
}
