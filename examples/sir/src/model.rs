//! The SIR model itself: the `transition` and `tally` kernels and `Sir`, which holds the
//! nodes, the ragged neighbour map, the double-buffered states, the parameters and the
//! random streams, and runs one op2 loop per tick. It also holds the hand-written
//! baselines (`sir_by_hand`, `tick_by_hand_parallel` over a `Csr`) that tests and the
//! benchmark compare against; `lib.rs` re-exports all of it.
use op2::prelude::*;
use op2::{Duplicates, EdgeRules, SelfLoops};

/// A node's state: susceptible.
pub const SUSCEPTIBLE: i32 = 0;
/// A node's state: infected.
pub const INFECTED: i32 = 1;
/// A node's state: recovered.
pub const RECOVERED: i32 = 2;

/// One node's tick, pulling its neighbours' states through the ragged
/// neighbour map and deciding with its own random stream (`rng`: the model's
/// streams, keyed by the node's global id and the tick). `params` = [p, q].
/// The chance of escaping infection is a product rather than `powi`, so that
/// every backend computes the same bits.
#[op2::kernel]
pub fn transition(next: &mut i32, state: &i32, neighbours: &[i32], params: &[f64; 2], rng: &mut Philox) {
    let mut s = *state;
    if s == 0 {
        let mut infected = 0;
        for &n in neighbours {
            if n == 1 {
                infected += 1;
            }
        }
        if infected > 0 {
            let mut escape = 1.0;
            for _k in 0..infected {
                escape *= 1.0 - params[0];
            }
            if rng.uniform_f64() < 1.0 - escape {
                s = 1;
            }
        }
    } else if s == 1 && rng.uniform_f64() < params[1] {
        s = 2;
    }
    *next = s;
}

/// Susceptible, infected and recovered nodes after a tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Susceptible nodes.
    pub susceptible: u64,
    /// Infected nodes.
    pub infected: u64,
    /// Recovered nodes.
    pub recovered: u64,
}

/// An epidemic on a network of `nodes` (with global ids) and undirected edges.
pub struct Sir {
    nodes: Set,
    neighbours: RaggedMap,
    state: Dat<i32>,
    next: Dat<i32>,
    params: Global<f64>,
    /// Tick `t` is the streams' loop `t - 1`: node `v` draws from
    /// `Philox::new(seed, global id of v, t - 1)`.
    streams: RandomStreams,
}

impl Sir {
    /// A network of `n` nodes (indices 0..n, global ids `ids` when given)
    /// with the undirected `edges` (pairs of indices), every node susceptible
    /// but `first` infected; transmission `p`, recovery `q`, random streams
    /// under `seed`.
    ///
    /// # Errors
    /// An [`op2::Error`] if an edge or `first` lies outside the nodes, `p` or
    /// `q` lies outside [0, 1], or the sets cannot be built.
    pub fn new(
        n: usize,
        ids: Option<Vec<u64>>,
        edges: &[(usize, usize)],
        first: usize,
        (p, q): (f64, f64),
        seed: u64,
    ) -> op2::Result<Sir> {
        check_probabilities(p, q)?;
        let nodes = match ids {
            Some(ids) => Set::with_global_ids("nodes", ids)?,
            None => Set::new("nodes", n)?,
        };
        if first >= nodes.size() {
            return Err(op2::Error::InvalidOption {
                option: "seed-node",
                reason: format!("node {first} is not one of the {} nodes", nodes.size()),
            });
        }
        if let Some((k, &(a, b))) = edges
            .iter()
            .enumerate()
            .find(|(_, &(a, b))| a >= nodes.size() || b >= nodes.size())
        {
            return Err(op2::Error::InvalidOption {
                option: "graph",
                reason: format!("edge {k} ({a}, {b}) leaves the {} nodes", nodes.size()),
            });
        }
        // Both directions of every edge, each copy counted: transmission
        // along each edge is independent.
        let rules = EdgeRules {
            undirected: true,
            duplicates: Duplicates::Keep,
            self_loops: SelfLoops::Keep,
        };
        let neighbours = RaggedMap::from_edges("neighbours", &nodes, &nodes, edges, rules)?;
        let mut state = vec![SUSCEPTIBLE; nodes.size()];
        state[first] = INFECTED;
        Ok(Sir {
            state: Dat::from_vec("state", &nodes, 1, state)?,
            next: Dat::zeros("next_state", &nodes, 1)?,
            params: Global::new("p_q", vec![p, q])?,
            nodes,
            neighbours,
            streams: RandomStreams::new("sir", seed),
        })
    }

    /// Ticks computed so far.
    pub fn tick(&self) -> u32 {
        self.streams.loops()
    }

    /// The counts of the current states (over every rank).
    pub fn counts(&self, rt: &Runtime) -> op2::Result<Counts> {
        let counts = Global::<i64>::zeros("counts", 3)?;
        par_loop!(rt, tally, self.nodes, self.state(READ), counts(INC))?;
        let c = counts.data_ro();
        Ok(Counts {
            susceptible: c[0] as u64,
            infected: c[1] as u64,
            recovered: c[2] as u64,
        })
    }

    /// One tick; the counts after it.
    pub fn step(&mut self, rt: &Runtime) -> op2::Result<Counts> {
        par_loop!(
            rt,
            transition,
            self.nodes,
            self.next(WRITE),
            self.state(READ),
            self.state(READ, self.neighbours[..]),
            self.params(READ),
            self.streams(DRAW)
        )?;
        self.state.swap(&self.next)?;
        self.counts(rt)
    }

    /// Goes back to `states` (every local node's, in node order) after
    /// `tick` ticks: the next step computes tick `tick + 1` with that tick's
    /// draws (to resume from a checkpoint, or to time one tick repeatedly).
    ///
    /// # Errors
    /// [`op2::Error::InvalidOption`] if `states` does not hold one valid
    /// state per local node.
    pub fn restart(&mut self, states: &[i32], tick: u32) -> op2::Result<()> {
        let n = self.state.set().size();
        if states.len() != n {
            return Err(op2::Error::InvalidOption {
                option: "states",
                reason: format!("{} states given for {n} nodes", states.len()),
            });
        }
        if let Some((v, s)) = states
            .iter()
            .enumerate()
            .find(|(_, s)| !(SUSCEPTIBLE..=RECOVERED).contains(*s))
        {
            return Err(op2::Error::InvalidOption {
                option: "states",
                reason: format!("node {v} has state {s}, not 0 (S), 1 (I) or 2 (R)"),
            });
        }
        self.state.try_data_mut()?[..n].copy_from_slice(states);
        self.streams.set_loops(tick);
        Ok(())
    }

    /// Every local node's state, in node order.
    pub fn states(&self) -> Vec<i32> {
        self.state.to_vec()
    }

    /// The current states' Dat (to gather a distributed run).
    pub fn state(&self) -> &Dat<i32> {
        &self.state
    }

    /// This epidemic spread over the ranks of `mpi` (the network cut with
    /// METIS; each rank's halo holds the neighbours its nodes read).
    #[cfg(feature = "mpi")]
    pub fn distribute(&self, mpi: &op2::mpi::Mpi) -> op2::Result<(Sir, op2::mpi::Distributed)> {
        let d = mpi.distribute_graph(&[&self.nodes], &[], &[&self.neighbours], &self.nodes)?;
        let nodes = d.set(&self.nodes)?;
        let sir = Sir {
            neighbours: d.ragged(&self.neighbours)?,
            state: d.dat(&self.state)?,
            next: Dat::zeros("next_state", &nodes, 1)?,
            params: self.params.clone(),
            nodes,
            streams: {
                let streams = RandomStreams::new("sir", self.streams.seed());
                streams.set_loops(self.streams.loops());
                streams
            },
        };
        Ok((sir, d))
    }
}

/// An error naming `p` (transmission) or `q` (recovery) if it is not a
/// probability.
pub(crate) fn check_probabilities(p: f64, q: f64) -> op2::Result<()> {
    for (name, v) in [("p-infect", p), ("p-recover", q)] {
        if !(0.0..=1.0).contains(&v) {
            return Err(op2::Error::InvalidOption {
                option: name,
                reason: format!("{v} is not a probability in [0, 1]"),
            });
        }
    }
    Ok(())
}

/// Adds a node's state to the counts.
#[op2::kernel]
pub fn tally(state: &i32, counts: &mut [i64; 3]) {
    counts[*state as usize] += 1;
}

/// One node's tick in plain Rust, as the `transition` kernel decides it (the
/// kernel cannot call functions, so it spells the same rule out): the
/// baselines share this.
/// `draw_loop` is the tick's loop counter: tick `t` (from 1) is loop `t - 1`.
fn decide(state: i32, infected: usize, (p, q): (f64, f64), seed: u64, id: u64, draw_loop: u32) -> i32 {
    let mut rng = op2::Philox::new(seed, id, draw_loop);
    if state == SUSCEPTIBLE && infected > 0 {
        // A product, not `powi`: the kernel's translation computes the same bits.
        let mut escape = 1.0;
        for _ in 0..infected {
            escape *= 1.0 - p;
        }
        if rng.uniform_f64() < 1.0 - escape {
            return INFECTED;
        }
    } else if state == INFECTED && rng.uniform_f64() < q {
        return RECOVERED;
    }
    state
}

/// The same model written directly in Rust, on one process: the states after
/// each of `ticks` ticks (stopping early when no node is infected).
pub fn sir_by_hand(
    ids: &[u64],
    edges: &[(usize, usize)],
    first: usize,
    (p, q): (f64, f64),
    seed: u64,
    ticks: u32,
) -> Vec<Vec<i32>> {
    let n = ids.len();
    let mut state = vec![SUSCEPTIBLE; n];
    state[first] = INFECTED;
    let mut history = vec![state.clone()];
    for tick in 1..=ticks {
        if !state.contains(&INFECTED) {
            break;
        }
        let mut infected = vec![0i32; n];
        for &(a, b) in edges {
            infected[b] += i32::from(state[a] == INFECTED);
            infected[a] += i32::from(state[b] == INFECTED);
        }
        let mut next = state.clone();
        for v in 0..n {
            next[v] = decide(state[v], infected[v] as usize, (p, q), seed, ids[v], tick - 1);
        }
        state = next;
        history.push(state.clone());
    }
    history
}

/// A network in CSR form for the hand-written parallel tick: node `v`'s
/// neighbours are `targets[offsets[v]..offsets[v + 1]]`, both directions of
/// every undirected edge.
pub struct Csr {
    /// Neighbour list starts, `n + 1` of them.
    pub offsets: Vec<usize>,
    /// Neighbours, node after node.
    pub targets: Vec<u32>,
}

impl Csr {
    /// The CSR of `n` nodes and undirected `edges`.
    pub fn new(n: usize, edges: &[(usize, usize)]) -> Csr {
        let mut offsets = vec![0usize; n + 1];
        for &(a, b) in edges {
            offsets[a + 1] += 1;
            offsets[b + 1] += 1;
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; offsets[n]];
        for &(a, b) in edges {
            targets[fill[a]] = b as u32;
            fill[a] += 1;
            targets[fill[b]] = a as u32;
            fill[b] += 1;
        }
        Csr { offsets, targets }
    }
}

/// One tick of the same model written directly in Rust, pulling each node's
/// infected neighbours from the CSR, nodes in parallel on the current rayon
/// pool: the baseline the op2 version is timed against. Returns the counts.
/// `draw_loop` is the tick's loop counter (tick `t` is loop `t - 1`).
pub fn tick_by_hand_parallel(
    ids: &[u64],
    csr: &Csr,
    state: &[i32],
    next: &mut [i32],
    (p, q): (f64, f64),
    seed: u64,
    draw_loop: u32,
) -> Counts {
    use rayon::prelude::*;
    let counts = next
        .par_iter_mut()
        .enumerate()
        .map(|(v, out)| {
            // Only susceptible nodes need their infected neighbours counted.
            let infected = if state[v] == SUSCEPTIBLE {
                csr.targets[csr.offsets[v]..csr.offsets[v + 1]]
                    .iter()
                    .filter(|&&u| state[u as usize] == INFECTED)
                    .count()
            } else {
                0
            };
            let decided = decide(state[v], infected, (p, q), seed, ids[v], draw_loop);
            *out = decided;
            let mut c = [0u64; 3];
            c[decided as usize] = 1;
            c
        })
        .reduce(|| [0u64; 3], |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2]]);
    Counts {
        susceptible: counts[0],
        infected: counts[1],
        recovered: counts[2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random graph: `m` edges between `n` nodes, no self loops.
    fn random_graph(n: usize, m: usize, seed: u64) -> Vec<(usize, usize)> {
        let mut rng = op2::Philox::new(seed, 0, 0);
        let mut edges = Vec::new();
        while edges.len() < m {
            let (a, b) = (rng.below(n as u32) as usize, rng.below(n as u32) as usize);
            if a != b {
                edges.push((a, b));
            }
        }
        edges
    }

    fn run_op2(
        rt: &Runtime,
        n: usize,
        edges: &[(usize, usize)],
        first: usize,
        pq: (f64, f64),
        seed: u64,
        ticks: u32,
    ) -> Vec<Vec<i32>> {
        let ids: Vec<u64> = (0..n as u64).map(|i| 1000 + 3 * i).collect();
        let mut sir = Sir::new(n, Some(ids), edges, first, pq, seed).unwrap();
        let mut history = vec![sir.states()];
        for _ in 0..ticks {
            if sir.counts(rt).unwrap().infected == 0 {
                break;
            }
            let c = sir.step(rt).unwrap();
            let states = sir.states();
            assert_eq!(c.infected, states.iter().filter(|&&s| s == INFECTED).count() as u64);
            history.push(states);
        }
        history
    }

    #[test]
    fn the_op2_model_matches_the_hand_written_one() {
        let rt = Runtime::new(Backend::Seq).unwrap();
        for seed in [1, 2, 3] {
            let edges = random_graph(80, 200, seed);
            let ids: Vec<u64> = (0..80).map(|i| 1000 + 3 * i).collect();
            let want = sir_by_hand(&ids, &edges, 5, (0.3, 0.2), seed, 40);
            assert_eq!(run_op2(&rt, 80, &edges, 5, (0.3, 0.2), seed, 40), want, "seed {seed}");
        }
    }

    #[test]
    fn with_certain_transmission_and_recovery_the_epidemic_is_a_bfs_wave() {
        let rt = Runtime::new(Backend::Seq).unwrap();
        let n = 70;
        let edges = random_graph(n, 120, 7);
        let mut distance = vec![usize::MAX; n];
        distance[0] = 0;
        let mut frontier = vec![0];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &v in &frontier {
                for &(a, b) in &edges {
                    for (x, y) in [(a, b), (b, a)] {
                        if x == v && distance[y] == usize::MAX {
                            distance[y] = distance[v] + 1;
                            next.push(y);
                        }
                    }
                }
            }
            frontier = next;
        }
        let history = run_op2(&rt, n, &edges, 0, (1.0, 1.0), 99, 100);
        for (t, states) in history.iter().enumerate() {
            for v in 0..n {
                let want = match distance[v] {
                    d if d < t => RECOVERED,
                    d if d == t => INFECTED,
                    _ => SUSCEPTIBLE,
                };
                assert_eq!(states[v], want, "tick {t}, node {v} at distance {}", distance[v]);
            }
        }
    }

    #[test]
    fn the_parallel_hand_written_tick_matches_the_sequential_one() {
        let n = 120;
        let edges = random_graph(n, 300, 4);
        let ids: Vec<u64> = (0..n as u64).map(|i| 5 + 11 * i).collect();
        let want = sir_by_hand(&ids, &edges, 2, (0.3, 0.15), 8, 30);
        let csr = Csr::new(n, &edges);
        let mut state = want[0].clone();
        let mut next = vec![0; n];
        for (tick, states) in want.iter().enumerate().skip(1) {
            let c = tick_by_hand_parallel(&ids, &csr, &state, &mut next, (0.3, 0.15), 8, tick as u32 - 1);
            std::mem::swap(&mut state, &mut next);
            assert_eq!(&state, states, "tick {tick}");
            assert_eq!(c.infected, states.iter().filter(|&&s| s == INFECTED).count() as u64);
        }
    }

    #[test]
    fn a_restart_repeats_the_tick_it_goes_back_to() {
        let rt = Runtime::new(Backend::Seq).unwrap();
        let edges = random_graph(60, 150, 5);
        let mut sir = Sir::new(60, None, &edges, 3, (0.4, 0.2), 6).unwrap();
        for _ in 0..4 {
            sir.step(&rt).unwrap();
        }
        let at4 = sir.states();
        let c5 = sir.step(&rt).unwrap();
        let at5 = sir.states();
        sir.step(&rt).unwrap();
        sir.restart(&at4, 4).unwrap();
        assert_eq!(sir.tick(), 4);
        assert_eq!(sir.step(&rt).unwrap(), c5);
        assert_eq!(sir.states(), at5);
        let e = sir.restart(&at4[1..], 4).unwrap_err();
        assert!(e.to_string().contains("59 states given for 60 nodes"), "{e}");
        let mut bad = at4.clone();
        bad[7] = 3;
        let e = sir.restart(&bad, 4).unwrap_err();
        assert!(e.to_string().contains("node 7 has state 3"), "{e}");
        assert_eq!(sir.states(), at5, "a refused restart changes nothing");
    }

    #[test]
    fn bad_parameters_are_errors() {
        let e = Sir::new(3, None, &[(0, 1)], 0, (1.5, 0.1), 0).err().expect("p > 1");
        assert!(
            e.to_string().contains("p-infect") && e.to_string().contains("1.5"),
            "{e}"
        );
        let e = Sir::new(3, None, &[(0, 3)], 0, (0.5, 0.1), 0)
            .err()
            .expect("edge outside");
        assert!(e.to_string().contains("edge 0 (0, 3)"), "{e}");
        let e = Sir::new(3, None, &[(0, 1)], 3, (0.5, 0.1), 0)
            .err()
            .expect("seed node outside");
        assert!(e.to_string().contains("node 3"), "{e}");
    }
}
