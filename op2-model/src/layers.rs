//! The order a model's functions run in each step: layers, each a set of
//! functions that do not depend on each other (so they may run together),
//! derived from what each function reads and writes, or given by the
//! modeller (FLAME GPU's layers) and checked against the same dependencies.
//!
//! Function B depends on function A when
//! - A outputs a message list B reads (whatever order they were declared in);
//! - or A was declared before B and both use one thing, one of them
//!   writing it: a variable of an agent type, the agents' states, the
//!   population itself (births and deaths change it; every function on a
//!   type reads it), an environment property.
//!
//! A model whose dependencies form a cycle cannot be ordered: the error
//! names the cycle, each step with what it goes through.

use std::fmt;

use op2_core::Access;

use crate::{AgentFunction, Model};

/// What functions share.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Resource {
    Variable(String, String),
    States(String),
    Population(String),
    List(String),
    Environment(String),
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Variable(agent, v) => write!(f, "variable `{agent}.{v}`"),
            Resource::States(agent) => write!(f, "the states of `{agent}`"),
            Resource::Population(agent) => write!(f, "the population of `{agent}`"),
            Resource::List(l) => write!(f, "message list `{l}`"),
            Resource::Environment(p) => write!(f, "environment property `{p}`"),
        }
    }
}

/// What `f` uses, and whether it writes each (message lists: its input
/// read, its output written; the variables its output carries, read).
fn accesses(model: &Model, f: &AgentFunction) -> Vec<(Resource, bool)> {
    let agent = &f.agent;
    let mut out: Vec<(Resource, bool)> = f
        .uses
        .iter()
        .map(|u| {
            (
                Resource::Variable(agent.clone(), u.name.clone()),
                u.access != Access::Read,
            )
        })
        .collect();
    // A variable read through a network is read (its writes, if any, go
    // to a second buffer that takes its place after the function).
    out.extend((f.neighbours.iter()).map(|(_, v)| (Resource::Variable(agent.clone(), v.clone()), false)));
    out.push((Resource::Population(agent.clone()), f.deaths));
    if f.state.is_some() || f.next_state.is_some() {
        out.push((Resource::States(agent.clone()), f.next_state.is_some()));
    }
    if let Some(t) = &f.births {
        out.push((Resource::Population(t.clone()), true));
    }
    out.extend(
        f.environment
            .iter()
            .map(|(p, a)| (Resource::Environment(p.clone()), *a != Access::Read)),
    );
    if let Some(l) = &f.input {
        out.push((Resource::List(l.clone()), false));
    }
    if let Some((l, _)) = &f.output {
        out.push((Resource::List(l.clone()), true));
        let carried = model.message(l).map_or(&[][..], |m| &m.carried[..]);
        out.extend(
            carried
                .iter()
                .map(|v| (Resource::Variable(agent.clone(), v.clone()), false)),
        );
    }
    out
}

/// Why `b` depends on `a` (declared in that order unless a message list
/// orders them), if it does.
fn dependency(model: &Model, a: &AgentFunction, b: &AgentFunction, a_first: bool) -> Option<Resource> {
    // A message list orders its output before its readers, whatever the
    // declaration order.
    if let (Some((l, _)), Some(i)) = (&a.output, &b.input) {
        if l == i {
            return Some(Resource::List(l.clone()));
        }
    }
    if !a_first {
        return None;
    }
    let (ua, ub) = (accesses(model, a), accesses(model, b));
    ua.iter().find_map(|(r, wa)| {
        if matches!(r, Resource::List(_)) {
            return None;
        }
        ub.iter().find(|(s, wb)| s == r && (*wa || *wb)).map(|_| r.clone())
    })
}

/// The model's functions in layers, each a list of function names in
/// declaration order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layers(Vec<Vec<String>>);

impl Layers {
    /// The layers, first to last.
    pub fn as_slice(&self) -> &[Vec<String>] {
        &self.0
    }

    /// How many.
    #[allow(clippy::len_without_is_empty)] // a model has at least one function to order
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Display for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, layer) in self.0.iter().enumerate() {
            if k > 0 {
                writeln!(f)?;
            }
            write!(f, "layer {}: {}", k + 1, layer.join(", "))?;
        }
        Ok(())
    }
}

/// Every dependency: `(a, b, why)` for `b` depending on `a`, by index.
fn edges(model: &Model, functions: &[AgentFunction]) -> Vec<(usize, usize, Resource)> {
    let mut out = Vec::new();
    for (i, a) in functions.iter().enumerate() {
        for (j, b) in functions.iter().enumerate() {
            if i != j {
                if let Some(r) = dependency(model, a, b, i < j) {
                    out.push((i, j, r));
                }
            }
        }
    }
    out
}

/// The layers the dependencies of `model`'s functions allow, each function
/// in the first layer after everything it depends on.
///
/// # Errors
/// [`op2_core::Error::InvalidModel`] naming a cycle.
pub(crate) fn derive(model: &Model) -> op2_core::Result<Layers> {
    let functions = &model.functions;
    let edges = edges(model, functions);
    let n = functions.len();
    // Kahn's algorithm, taking ready functions in declaration order.
    let mut waiting: Vec<usize> = vec![0; n];
    for (_, b, _) in &edges {
        waiting[*b] += 1;
    }
    let mut layer_of = vec![0usize; n];
    let mut done = vec![false; n];
    for _ in 0..n {
        let Some(next) = (0..n).find(|&k| !done[k] && waiting[k] == 0) else {
            return Err(model.invalid(cycle(functions, &edges, &done)));
        };
        done[next] = true;
        for (a, b, _) in edges.iter().filter(|(a, _, _)| *a == next) {
            waiting[*b] -= 1;
            layer_of[*b] = layer_of[*b].max(layer_of[*a] + 1);
        }
    }
    let count = layer_of.iter().max().map_or(0, |&m| m + 1);
    let mut layers = vec![Vec::new(); count];
    for (k, f) in functions.iter().enumerate() {
        layers[layer_of[k]].push(f.name.clone());
    }
    Ok(Layers(layers))
}

/// A cycle among the functions not `done`, as text.
fn cycle(functions: &[AgentFunction], edges: &[(usize, usize, Resource)], done: &[bool]) -> String {
    // Every function left has an unfinished predecessor: walk back until a
    // function repeats.
    let start = (0..functions.len()).find(|&k| !done[k]).unwrap_or(0);
    let mut path = vec![start];
    loop {
        let at = *path.last().unwrap_or(&start);
        let Some((a, _, _)) = edges.iter().find(|(a, b, _)| *b == at && !done[*a]) else {
            break;
        };
        if let Some(p) = path.iter().position(|k| k == a) {
            path.push(*a);
            path.drain(..p);
            break;
        }
        path.push(*a);
    }
    // The walk went backwards: tell it forwards.
    path.reverse();
    let mut text = format!("its functions cannot be ordered: `{}`", functions[path[0]].name);
    for w in path.windows(2) {
        let why = edges
            .iter()
            .find(|(a, b, _)| *a == w[0] && *b == w[1])
            .map(|(_, _, r)| r.to_string())
            .unwrap_or_default();
        text += &format!(" -> `{}` ({why})", functions[w[1]].name);
    }
    text + " is a cycle"
}

/// Checks layers the modeller gave: every function once, and none in the
/// same layer as or before something it depends on.
///
/// # Errors
/// [`op2_core::Error::InvalidModel`] naming the function and the dependency.
pub(crate) fn check(model: &Model, given: &[Vec<String>]) -> op2_core::Result<Layers> {
    let functions = &model.functions;
    let mut layer_of = vec![None; functions.len()];
    for (k, layer) in given.iter().enumerate() {
        for name in layer {
            let Some(i) = functions.iter().position(|f| &f.name == name) else {
                return Err(model.invalid(format!(
                    "layer {} names function `{name}`, which it does not have",
                    k + 1
                )));
            };
            if let Some(other) = layer_of[i].replace(k) {
                return Err(model.invalid(format!("function `{name}` is in layers {} and {}", other + 1, k + 1)));
            }
        }
    }
    if let Some(i) = layer_of.iter().position(Option::is_none) {
        return Err(model.invalid(format!("function `{}` is in no layer", functions[i].name)));
    }
    let at = |i: usize| layer_of[i].unwrap_or_default();
    for (a, b, why) in edges(model, functions) {
        if at(a) >= at(b) {
            return Err(model.invalid(format!(
                "function `{}` (layer {}) depends on `{}` (layer {}) through {why}: it must be in a later layer",
                functions[b].name,
                at(b) + 1,
                functions[a].name,
                at(a) + 1
            )));
        }
    }
    let mut layers: Vec<Vec<String>> = vec![Vec::new(); given.len()];
    for (i, f) in functions.iter().enumerate() {
        layers[at(i)].push(f.name.clone());
    }
    Ok(Layers(layers))
}
