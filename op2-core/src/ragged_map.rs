//! Neighbour lists of varying length: each element of one set to any number
//! of elements of another, stored as CSR (offsets and targets, no padding, no
//! sentinel). The relation of agents on a graph; built from explicit arrays or
//! from an edge list under the rules the caller chooses.

use std::fmt;
use std::sync::Arc;

use crate::{Error, Result, Set};

/// Each element of `from` to a list of elements of `to`, in CSR form: the
/// targets of element `e` are `targets[offsets[e]..offsets[e + 1]]`, in the
/// order given. Immutable once built; a cheap cloneable handle.
#[derive(Clone)]
pub struct RaggedMap(Arc<RaggedInner>);

struct RaggedInner {
    id: u64,
    name: String,
    from: Set,
    to: Set,
    offsets: Vec<i32>,
    targets: Vec<i32>,
    offsets_device: crate::DeviceCell,
    targets_device: crate::DeviceCell,
    max_degree: usize,
    /// The generations of `from` and `to` when the map was made.
    generations: (u64, u64),
}

/// What [`RaggedMap::from_edges`] does with an edge given twice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Duplicates {
    /// Keep every copy: the target appears as often as the edge was given.
    Keep,
    /// Keep the first copy only (a simple graph).
    #[default]
    Merge,
    /// An error naming the edge.
    Reject,
}

/// What [`RaggedMap::from_edges`] does with an edge from an element to itself
/// (only meaningful when `from` and `to` are one set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SelfLoops {
    /// Keep it: the element is its own neighbour.
    Keep,
    /// Leave it out.
    #[default]
    Drop,
    /// An error naming the edge.
    Reject,
}

/// How [`RaggedMap::from_edges`] reads an edge list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeRules {
    /// Each edge `(a, b)` also gives `(b, a)` (a neighbour relation).
    pub undirected: bool,
    /// Edges given more than once.
    pub duplicates: Duplicates,
    /// Edges from an element to itself.
    pub self_loops: SelfLoops,
}

impl EdgeRules {
    /// Undirected edges, duplicates merged, self loops dropped: a simple graph.
    pub fn undirected() -> EdgeRules {
        EdgeRules {
            undirected: true,
            ..EdgeRules::default()
        }
    }

    /// Directed edges, duplicates merged, self loops dropped.
    pub fn directed() -> EdgeRules {
        EdgeRules::default()
    }
}

impl RaggedMap {
    /// Most targets a ragged map may hold in all: generated code indexes them
    /// with 32-bit integers, as map entries.
    pub const MAX_TARGETS: usize = i32::MAX as usize;

    /// Whether the map still fits its sets: `Err` if either is a dynamic set
    /// that has been renumbered (births or deaths) since the map was made.
    ///
    /// # Errors
    /// [`Error::StaleIndices`] naming the map and the set.
    pub fn check_current(&self) -> Result<()> {
        let m = &*self.0;
        m.from.check_generation("ragged map", &m.name, m.generations.0)?;
        m.to.check_generation("ragged map", &m.name, m.generations.1)
    }

    /// A ragged map from CSR arrays: `offsets` has `from.total_size() + 1`
    /// entries, starts at 0, never decreases and ends at `targets.len()`;
    /// every target lies in `to`.
    ///
    /// # Errors
    /// [`Error::InvalidRaggedMap`] naming the first offset or target that
    /// breaks these rules, or a total over [`RaggedMap::MAX_TARGETS`].
    pub fn new(
        name: impl Into<String>,
        from: &Set,
        to: &Set,
        offsets: Vec<usize>,
        targets: Vec<i32>,
    ) -> Result<RaggedMap> {
        let name = name.into();
        from.check_narrow("a ragged map")?;
        to.check_narrow("a ragged map")?;
        let invalid = |reason: String| Error::InvalidRaggedMap {
            map: name.clone(),
            reason,
        };
        let n = from.total_size();
        if offsets.len() != n + 1 {
            return Err(invalid(format!(
                "{} offsets for the {n} elements of `{}`: expected {} (one per element, then the end)",
                offsets.len(),
                from.name(),
                n + 1
            )));
        }
        if targets.len() > Self::MAX_TARGETS {
            return Err(invalid(format!(
                "{} targets, more than the {} generated code can index",
                targets.len(),
                Self::MAX_TARGETS
            )));
        }
        if offsets[0] != 0 {
            return Err(invalid(format!("offsets must start at 0, not {}", offsets[0])));
        }
        if let Some(e) = (0..n).find(|&e| offsets[e + 1] < offsets[e]) {
            return Err(invalid(format!(
                "offsets decrease at element {e}: {} then {}",
                offsets[e],
                offsets[e + 1]
            )));
        }
        if offsets[n] != targets.len() {
            return Err(invalid(format!(
                "the last offset is {} but there are {} targets",
                offsets[n],
                targets.len()
            )));
        }
        let size = to.total_size();
        if let Some(k) = targets.iter().position(|&t| t < 0 || t as usize >= size) {
            let element = offsets.partition_point(|&o| o <= k) - 1;
            return Err(invalid(format!(
                "target {k} (of element {element}) is {}, outside set `{}` of size {size}",
                targets[k],
                to.name()
            )));
        }
        let max_degree = offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        Ok(RaggedMap(Arc::new(RaggedInner {
            max_degree,
            id: crate::id::next_id(),
            name,
            from: from.clone(),
            to: to.clone(),
            offsets: offsets.into_iter().map(|o| o as i32).collect(),
            targets,
            offsets_device: crate::DeviceCell::default(),
            targets_device: crate::DeviceCell::default(),
            generations: (from.generation(), to.generation()),
        })))
    }

    /// A ragged map from an edge list `(source in from, target in to)`,
    /// under `rules`. Each element's targets keep the order of the edges that
    /// give them (for undirected edges, `(a, b)` gives `b` to `a` and `a` to
    /// `b` at its place in the list), so the result does not depend on
    /// anything but the input.
    ///
    /// # Errors
    /// [`Error::InvalidRaggedMap`] naming the edge whose ends lie outside the
    /// sets, that is undirected between two different sets, or that the rules
    /// reject (a duplicate, a self loop).
    pub fn from_edges(
        name: impl Into<String>,
        from: &Set,
        to: &Set,
        edges: &[(usize, usize)],
        rules: EdgeRules,
    ) -> Result<RaggedMap> {
        let name = name.into();
        from.check_narrow("a ragged map")?;
        to.check_narrow("a ragged map")?;
        let invalid = |reason: String| Error::InvalidRaggedMap {
            map: name.clone(),
            reason,
        };
        let same_set = from.same(to);
        if rules.undirected && !same_set {
            return Err(invalid(format!(
                "undirected edges need one set, not `{}` and `{}`",
                from.name(),
                to.name()
            )));
        }
        let (n, m) = (from.total_size(), to.total_size());
        let mut directed = Vec::with_capacity(edges.len() * if rules.undirected { 2 } else { 1 });
        for (k, &(a, b)) in edges.iter().enumerate() {
            if a >= n || b >= m {
                return Err(invalid(format!(
                    "edge {k} is ({a}, {b}), outside `{}` ({n}) or `{}` ({m})",
                    from.name(),
                    to.name()
                )));
            }
            if same_set && a == b {
                match rules.self_loops {
                    SelfLoops::Keep => {}
                    SelfLoops::Drop => continue,
                    SelfLoops::Reject => return Err(invalid(format!("edge {k} is a self loop at {a}"))),
                }
            }
            directed.push((a, b, k));
            if rules.undirected && a != b {
                directed.push((b, a, k));
            }
        }
        // Bucket by source, keeping each source's edges in input order.
        let mut offsets = vec![0usize; n + 1];
        for &(a, _, _) in &directed {
            offsets[a + 1] += 1;
        }
        for e in 0..n {
            offsets[e + 1] += offsets[e];
        }
        let mut next = offsets.clone();
        let mut placed = vec![(0i32, 0usize); directed.len()];
        for &(a, b, k) in &directed {
            placed[next[a]] = (b as i32, k);
            next[a] += 1;
        }
        let mut targets = Vec::with_capacity(placed.len());
        let mut kept_offsets = Vec::with_capacity(n + 1);
        kept_offsets.push(0);
        let mut seen = std::collections::HashMap::new();
        for e in 0..n {
            seen.clear();
            for &(b, k) in &placed[offsets[e]..offsets[e + 1]] {
                if let Some(first) = seen.insert(b, k) {
                    match rules.duplicates {
                        Duplicates::Keep => {}
                        Duplicates::Merge => continue,
                        Duplicates::Reject => {
                            return Err(invalid(format!("edges {first} and {k} both connect {e} to {b}")))
                        }
                    }
                }
                targets.push(b);
            }
            kept_offsets.push(targets.len());
        }
        RaggedMap::new(name, from, to, kept_offsets, targets)
    }

    /// The map's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The set it maps from.
    pub fn from_set(&self) -> &Set {
        &self.0.from
    }

    /// The set it maps to.
    pub fn to_set(&self) -> &Set {
        &self.0.to
    }

    /// The targets of element `e` (empty past the set).
    pub fn targets_of(&self, e: usize) -> &[i32] {
        match (self.0.offsets.get(e), self.0.offsets.get(e + 1)) {
            (Some(&a), Some(&b)) => &self.0.targets[a as usize..b as usize],
            _ => &[],
        }
    }

    /// How many targets element `e` has.
    pub fn degree(&self, e: usize) -> usize {
        self.targets_of(e).len()
    }

    /// The largest degree (0 for an empty set).
    pub fn max_degree(&self) -> usize {
        self.0.max_degree
    }

    /// The CSR offsets: `from.total_size() + 1` of them.
    pub fn offsets(&self) -> &[i32] {
        &self.0.offsets
    }

    /// Every target, element after element.
    pub fn targets(&self) -> &[i32] {
        &self.0.targets
    }

    /// A process-wide unique identity, never reused: usable as a cache key.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// As [`Map::watch`](crate::Map): whether the map still exists.
    pub(crate) fn watch(&self) -> crate::plan_cache::Watch {
        crate::plan_cache::Watch::of(&self.0)
    }

    /// The device copy of the offsets (uploaded once and kept).
    pub fn offsets_device(&self) -> &crate::DeviceCell {
        &self.0.offsets_device
    }

    /// The device copy of the targets (uploaded once and kept).
    pub fn targets_device(&self) -> &crate::DeviceCell {
        &self.0.targets_device
    }

    /// Whether two handles are the same map.
    pub fn same(&self, other: &RaggedMap) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for RaggedMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RaggedMap({:?}: {:?} -> {:?}, {} targets)",
            self.name(),
            self.from_set().name(),
            self.to_set().name(),
            self.targets().len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(n: usize) -> Set {
        Set::new("nodes", n).unwrap()
    }

    #[test]
    fn csr_arrays_are_checked_naming_the_problem() {
        let s = nodes(3);
        let ok = RaggedMap::new("nbrs", &s, &s, vec![0, 2, 2, 3], vec![1, 2, 0]).unwrap();
        assert_eq!(ok.targets_of(0), &[1, 2]);
        assert_eq!(ok.degree(1), 0);
        assert_eq!(ok.max_degree(), 2);
        assert_eq!(ok.targets_of(9), &[] as &[i32]);
        let err = |offsets: Vec<usize>, targets: Vec<i32>| {
            RaggedMap::new("nbrs", &s, &s, offsets, targets)
                .unwrap_err()
                .to_string()
        };
        assert!(err(vec![0, 1, 2], vec![0, 1]).contains("3 offsets for the 3 elements of `nodes`: expected 4"));
        assert!(err(vec![1, 1, 2, 2], vec![0, 1]).contains("start at 0, not 1"));
        assert!(err(vec![0, 2, 1, 2], vec![0, 1]).contains("decrease at element 1: 2 then 1"));
        assert!(err(vec![0, 1, 1, 3], vec![0, 1]).contains("last offset is 3 but there are 2 targets"));
        let e = err(vec![0, 1, 1, 2], vec![0, 3]);
        assert!(
            e.contains("target 1 (of element 2) is 3, outside set `nodes` of size 3") && e.contains("`nbrs`"),
            "{e}"
        );
        assert!(err(vec![0, 1, 1, 2], vec![-1, 0]).contains("target 0 (of element 0) is -1"));
    }

    #[test]
    fn edge_lists_follow_the_rules() {
        let s = nodes(4);
        let edges = [(0, 1), (1, 2), (0, 1), (3, 3), (2, 0)];
        let simple = RaggedMap::from_edges("g", &s, &s, &edges, EdgeRules::undirected()).unwrap();
        assert_eq!(simple.targets_of(0), &[1, 2]);
        assert_eq!(simple.targets_of(1), &[0, 2]);
        assert_eq!(simple.targets_of(2), &[1, 0]);
        assert_eq!(simple.targets_of(3), &[] as &[i32], "self loop dropped");
        let multi = EdgeRules {
            undirected: true,
            duplicates: Duplicates::Keep,
            self_loops: SelfLoops::Keep,
        };
        let kept = RaggedMap::from_edges("g", &s, &s, &edges, multi).unwrap();
        assert_eq!(kept.targets_of(0), &[1, 1, 2]);
        assert_eq!(kept.targets_of(3), &[3], "a self loop once, not twice");
        let directed = RaggedMap::from_edges("g", &s, &s, &edges, EdgeRules::directed()).unwrap();
        assert_eq!(directed.targets_of(0), &[1]);
        assert_eq!(directed.targets_of(2), &[0]);
        let reject = |rules| {
            RaggedMap::from_edges("g", &s, &s, &edges, rules)
                .unwrap_err()
                .to_string()
        };
        let e = reject(EdgeRules {
            duplicates: Duplicates::Reject,
            ..EdgeRules::undirected()
        });
        assert!(e.contains("edges 0 and 2 both connect 0 to 1"), "{e}");
        let e = reject(EdgeRules {
            self_loops: SelfLoops::Reject,
            ..EdgeRules::undirected()
        });
        assert!(e.contains("edge 3 is a self loop at 3"), "{e}");
        let e = RaggedMap::from_edges("g", &s, &s, &[(0, 4)], EdgeRules::directed()).unwrap_err();
        assert!(e.to_string().contains("edge 0 is (0, 4), outside"), "{e}");
        let other = nodes(2);
        let e = RaggedMap::from_edges("g", &s, &other, &[(0, 1)], EdgeRules::undirected()).unwrap_err();
        assert!(e.to_string().contains("undirected edges need one set"), "{e}");
    }

    #[test]
    fn random_graphs_round_trip_through_csr() {
        // Degrees 0 to 50 on 60 nodes, from a fixed generator: the CSR lists
        // are exactly each node's directed edges, in input order.
        let s = nodes(60);
        let mut rng = crate::Philox::new(9, 0, 0);
        let mut edges = Vec::new();
        for a in 0..60 {
            for _ in 0..rng.below(51) {
                edges.push((a, rng.below(60) as usize));
            }
        }
        let rules = EdgeRules {
            undirected: false,
            duplicates: Duplicates::Keep,
            self_loops: SelfLoops::Keep,
        };
        let g = RaggedMap::from_edges("g", &s, &s, &edges, rules).unwrap();
        for a in 0..60 {
            let want: Vec<i32> = edges.iter().filter(|e| e.0 == a).map(|e| e.1 as i32).collect();
            assert_eq!(g.targets_of(a), &want[..], "node {a}");
        }
        assert_eq!(g.targets().len(), edges.len());
        assert!(g.max_degree() <= 50);
    }
}
