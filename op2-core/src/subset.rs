//! Subsets: loops over some elements of a set (PyOP2's `Subset`; FLAME GPU's
//! agent states and function conditions). A subset is its parent set and a
//! sorted list of distinct element indices; a loop over it visits
//! *positions* `0..len()`, and position `k` is element `indices()[k]` of the
//! parent set for every direct Dat and every map (docs/ARCHITECTURE.md,
//! Semantics every backend shares, Subsets).

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::{Dat, DeviceBuffer, DeviceState, Error, Result, Scalar, Set};

/// Some elements of a [`Set`], by index: what `par_loop!` iterates over in
/// place of the whole set. The indices are sorted ascending and distinct, so
/// a loop over a subset visits its elements in the set's order, each once.
/// Immutable once built; a cheap cloneable handle.
///
/// ```
/// use op2_core::{Set, Subset};
///
/// # fn main() -> op2_core::Result<()> {
/// let cells = Set::new("cells", 5)?;
/// let odd = Subset::filter("odd", &cells, |e| e % 2 == 1)?;
/// assert_eq!(odd.indices(), &[1, 3]);
/// let given = Subset::new("given", &cells, vec![4, 1, 4])?;
/// assert_eq!(given.indices(), &[1, 4]);
/// # Ok(())
/// # }
/// ```
///
/// A loop over `odd` then visits cells 1 and 3 only, with Dats on `cells`:
///
/// ```text
/// par_loop!(rt, double, odd, x(RW))?; // x = [1, 2, 3, 4, 5] becomes [1, 4, 3, 8, 5]
/// ```
#[derive(Clone)]
pub struct Subset(Arc<SubsetInner>);

struct SubsetInner {
    id: u64,
    name: String,
    set: Set,
    /// The elements on the host: given there, or (for a subset selected on
    /// a device) read back the first time the host needs them.
    indices: OnceLock<Vec<i32>>,
    len: usize,
    device: crate::DeviceCell,
    /// The set's generation when the subset was made.
    generation: u64,
}

impl Subset {
    /// Whether the subset still fits its set: `Err` if the set is dynamic
    /// and has been renumbered (births or deaths) since the subset was made.
    ///
    /// # Errors
    /// [`Error::StaleIndices`] naming the subset and the set.
    pub fn check_current(&self) -> Result<()> {
        self.0.set.check_generation("subset", &self.0.name, self.0.generation)
    }

    /// The elements `indices` of `set`, in any order and with repeats (as in
    /// PyOP2, the subset sorts them and keeps each once).
    ///
    /// # Errors
    /// [`Error::InvalidSubset`] naming the first index (in the order given)
    /// that is not an element a loop over `set` visits (`>= set.size()`, its
    /// owned elements); [`Error::LongSetUnsupported`] for a set of more than
    /// `i32::MAX` elements ([`Set::new_long`]): subsets' indices are 32-bit.
    pub fn new(name: impl Into<String>, set: &Set, mut indices: Vec<usize>) -> Result<Subset> {
        let name = name.into();
        set.check_narrow("a subset")?;
        let size = set.size();
        if let Some((position, &bad)) = indices.iter().enumerate().find(|&(_, &i)| i >= size) {
            return Err(Error::InvalidSubset {
                subset: name,
                reason: format!(
                    "index {bad} (at position {position}) is outside set `{}` of {}",
                    set.name(),
                    crate::plural(size, "element", "elements")
                ),
            });
        }
        indices.sort_unstable();
        indices.dedup();
        let indices = indices
            .into_iter()
            .map(i32::try_from)
            .collect::<std::result::Result<Vec<i32>, _>>()
            .map_err(|_| Error::InvalidSubset {
                subset: name.clone(),
                reason: format!("an index of set `{}` does not fit 32 bits", set.name()),
            })?;
        Ok(Subset::from_sorted(name, set, indices))
    }

    /// The elements `e` of `set` for which `pred(e)` holds.
    ///
    /// # Errors
    /// None in practice (every element of a set is a valid index); the
    /// `Result` matches the other constructors.
    pub fn filter(name: impl Into<String>, set: &Set, pred: impl Fn(usize) -> bool) -> Result<Subset> {
        set.check_narrow("a subset")?;
        // The set has at most i32::MAX elements: every index fits.
        let indices = (0..set.size()).filter(|&e| pred(e)).map(|e| e as i32).collect();
        Ok(Subset::from_sorted(name.into(), set, indices))
    }

    /// The elements of `dat`'s set whose values (`dat.dim()` of them) satisfy
    /// `pred`: agents in a state, cells above a threshold. Reads the Dat
    /// through its host access, which first brings a device copy back.
    ///
    /// # Errors
    /// [`Error::HostBorrow`] if the Dat is mutably borrowed on the host; a
    /// transfer error if its device copy cannot be read back.
    pub fn where_dat<T: Scalar>(name: impl Into<String>, dat: &Dat<T>, pred: impl Fn(&[T]) -> bool) -> Result<Subset> {
        let set = dat.set();
        set.check_narrow("a subset")?;
        let values = dat.try_data_ro()?;
        let indices = values
            .chunks_exact(dat.dim())
            .take(set.size())
            .enumerate()
            .filter(|(_, v)| pred(v))
            .map(|(e, _)| e as i32)
            .collect();
        Ok(Subset::from_sorted(name.into(), set, indices))
    }

    fn from_sorted(name: String, set: &Set, indices: Vec<i32>) -> Subset {
        debug_assert!(indices.windows(2).all(|w| w[0] < w[1]));
        Subset(Arc::new(SubsetInner {
            id: crate::id::next_id(),
            name,
            set: set.clone(),
            len: indices.len(),
            indices: OnceLock::from(indices),
            device: crate::DeviceCell::default(),
            generation: set.generation(),
        }))
    }

    /// The `len` elements of `set` that a selection on a device wrote to
    /// `selected` (`u32` indices, ascending and distinct, from
    /// [`crate::DeviceWork::select`] or `select_equal`): a subset whose
    /// indices stay on the device, for loops there, and come back to the
    /// host only if the host asks for them ([`Subset::indices`]).
    ///
    /// # Errors
    /// [`Error::InvalidSubset`] if `selected` holds fewer than `len`
    /// indices or `len` exceeds the set's elements.
    pub fn selected_on_device(
        name: impl Into<String>,
        set: &Set,
        selected: Box<dyn DeviceBuffer>,
        len: usize,
    ) -> Result<Subset> {
        let name = name.into();
        set.check_narrow("a subset")?;
        if len > set.size() || selected.bytes() < 4 * len {
            return Err(Error::InvalidSubset {
                subset: name,
                reason: format!(
                    "{len} elements selected on a device, in a buffer of {} bytes, of set `{}` of {}",
                    selected.bytes(),
                    set.name(),
                    crate::plural(set.size(), "element", "elements")
                ),
            });
        }
        let device = crate::DeviceCell::default();
        {
            let mut slot = device.lock();
            slot.buffer = Some(selected);
            slot.state = DeviceState::Device;
        }
        Ok(Subset(Arc::new(SubsetInner {
            id: crate::id::next_id(),
            name,
            set: set.clone(),
            len,
            indices: OnceLock::new(),
            device,
            generation: set.generation(),
        })))
    }

    /// The subset's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The parent set: direct Dats of a loop over the subset live on it, and
    /// its maps start from it.
    pub fn set(&self) -> &Set {
        &self.0.set
    }

    /// The elements, sorted ascending and distinct: loop position `k` is
    /// element `indices()[k]` of the parent set.
    ///
    /// # Panics
    /// If the subset was selected on a device and its indices cannot be
    /// read back; [`Subset::try_indices`] returns that error instead.
    pub fn indices(&self) -> &[i32] {
        match self.try_indices() {
            Ok(indices) => indices,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`Subset::indices`], or the error reading them back from the device
    /// where they were selected.
    ///
    /// # Errors
    /// A transfer error from the device; [`Error::InvalidSubset`] if what
    /// came back is not ascending, distinct elements of the set.
    pub fn try_indices(&self) -> Result<&[i32]> {
        if let Some(indices) = self.0.indices.get() {
            return Ok(indices);
        }
        let mut indices = vec![0i32; self.0.len];
        {
            let slot = self.0.device.lock();
            let buffer = slot
                .buffer
                .as_ref()
                .expect("a subset selected on a device keeps its buffer");
            buffer.download(bytemuck::cast_slice_mut(&mut indices))?;
        }
        // Host loops index the set's Dats with these: a buffer that does not
        // hold what a selection writes (ascending, distinct, in the set)
        // would have them read out of bounds, or two threads write one
        // element.
        let size = self.0.set.size();
        let in_set = |i: i32| usize::try_from(i).is_ok_and(|i| i < size);
        let bad = indices
            .iter()
            .position(|&i| !in_set(i))
            .or_else(|| indices.windows(2).position(|w| w[0] >= w[1]).map(|k| k + 1));
        if let Some(k) = bad {
            return Err(Error::InvalidSubset {
                subset: self.0.name.clone(),
                reason: format!(
                    "element {k} read back from the device is {}: a selection holds ascending, distinct elements of set `{}` (0 to {})",
                    indices[k],
                    self.0.set.name(),
                    size.saturating_sub(1)
                ),
            });
        }
        // Another thread may have read them first: the same values.
        Ok(self.0.indices.get_or_init(|| indices))
    }

    /// The subset's device buffer, if this is its last handle and it has
    /// one: for a caller that made it (a selection) to reuse the memory.
    pub fn into_device_buffer(self) -> Option<Box<dyn DeviceBuffer>> {
        let inner = Arc::try_unwrap(self.0).ok()?;
        let buffer = inner.device.lock().buffer.take();
        buffer
    }

    /// Whether the indices are on the host already (a subset selected on a
    /// device has them there only once the host asked).
    pub fn on_host(&self) -> bool {
        self.0.indices.get().is_some()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether the subset has no elements (a loop over it runs nothing).
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// A process-wide unique identity, never reused: usable as a cache key.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// How many handles of this subset exist (the plan cache compares it
    /// with the handles its plans keep).
    pub(crate) fn handles(&self) -> usize {
        Arc::strong_count(&self.0)
    }

    /// Whether two handles are the same subset.
    pub fn same(&self, other: &Subset) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The device copy of the indices (uploaded once and kept, like a map's
    /// table).
    pub fn device(&self) -> &crate::DeviceCell {
        &self.0.device
    }
}

impl fmt::Debug for Subset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Subset({:?}: {} of {:?})",
            self.name(),
            self.len(),
            self.set().name()
        )
    }
}

/// What `par_loop!` iterates over: a whole [`Set`] or a [`Subset`] (or a
/// reference to one). A function that runs one loop over either takes
/// `&impl IterationSpace` and passes it to `par_loop!` as its set, e.g.
/// the loop a distributed agent domain runs in two parts (op2-mpi's
/// `AgentDomain::build_overlapped_on`) and a single run over all agents.
#[diagnostic::on_unimplemented(
    message = "`par_loop!` iterates over a `Set` or a `Subset`, not `{Self}`",
    label = "expected a Set or a Subset"
)]
pub trait IterationSpace {
    /// The set the loop's direct Dats live on and its maps start from, and
    /// the subset of it the loop visits (`None`: all its owned elements).
    fn space(&self) -> (&Set, Option<&Subset>);
}

impl IterationSpace for Set {
    fn space(&self) -> (&Set, Option<&Subset>) {
        (self, None)
    }
}

impl IterationSpace for Subset {
    fn space(&self) -> (&Set, Option<&Subset>) {
        (self.set(), Some(self))
    }
}

impl<T: IterationSpace + ?Sized> IterationSpace for &T {
    fn space(&self) -> (&Set, Option<&Subset>) {
        (**self).space()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Indices in host memory, standing in for a device's selection.
    struct Selected(Vec<i32>);

    impl DeviceBuffer for Selected {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
        fn context_id(&self) -> u64 {
            1
        }
        fn upload(&self, _: &[u8]) -> Result<()> {
            Ok(())
        }
        fn download(&self, dst: &mut [u8]) -> Result<()> {
            dst.copy_from_slice(&bytemuck::cast_slice(&self.0)[..dst.len()]);
            Ok(())
        }
        fn bytes(&self) -> usize {
            4 * self.0.len()
        }
    }

    #[test]
    fn indices_read_back_from_a_device_are_checked() {
        let cells = Set::new("cells", 10).unwrap();
        let good = Subset::selected_on_device("good", &cells, Box::new(Selected(vec![1, 4, 9])), 3).unwrap();
        assert_eq!(good.try_indices().unwrap(), &[1, 4, 9]);
        for (bad, at) in [
            (vec![1, 12, 3], "element 1 read back"),
            (vec![-1], "element 0"),
            (vec![2, 2], "element 1"),
        ] {
            let n = bad.len();
            let s = Subset::selected_on_device("bad", &cells, Box::new(Selected(bad)), n).unwrap();
            let e = s.try_indices().unwrap_err().to_string();
            assert!(e.contains(at) && e.contains("ascending, distinct elements"), "{e}");
        }
    }

    #[test]
    fn indices_are_sorted_and_distinct() {
        let cells = Set::new("cells", 10).unwrap();
        let s = Subset::new("s", &cells, vec![7, 2, 9, 2, 0, 7]).unwrap();
        assert_eq!(s.indices(), &[0, 2, 7, 9]);
        assert_eq!(s.len(), 4);
        assert!(!s.is_empty());
        assert_eq!(s.name(), "s");
        assert!(s.set().same(&cells));
        assert!(s.same(&s.clone()));
        let again = Subset::new("s", &cells, vec![0, 2, 7, 9]).unwrap();
        assert!(!s.same(&again) && s.id() != again.id(), "each subset is its own");
        let empty = Subset::new("none", &cells, vec![]).unwrap();
        assert!(empty.is_empty() && empty.indices().is_empty());
    }

    #[test]
    fn an_index_outside_the_set_is_an_error_naming_it() {
        let cells = Set::new("cells", 10).unwrap();
        let e = Subset::new("active", &cells, vec![3, 12, 10, 1]).unwrap_err();
        assert!(matches!(e, Error::InvalidSubset { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "subset `active`: index 12 (at position 1) is outside set `cells` of 10 elements"
        );
        // Halo elements are not visited by loops: outside too.
        let halo = Set::with_regions(
            "halo",
            crate::SetRegions {
                core: 2,
                owned: 1,
                exec_halo: 2,
                nonexec_halo: 0,
            },
        )
        .unwrap();
        assert!(Subset::new("h", &halo, vec![2]).is_ok());
        let e = Subset::new("h", &halo, vec![3]).unwrap_err().to_string();
        assert!(e.contains("index 3") && e.contains("of 3 elements"), "{e}");
    }

    #[test]
    fn filter_and_where_dat_pick_elements_by_predicate() {
        let agents = Set::new("agents", 6).unwrap();
        let evens = Subset::filter("evens", &agents, |e| e % 2 == 0).unwrap();
        assert_eq!(evens.indices(), &[0, 2, 4]);
        let state = Dat::from_vec("state", &agents, 2, vec![0, 1, 1, 1, 2, 0, 1, 5, 0, 0, 1, 2]).unwrap();
        let infected = Subset::where_dat("infected", &state, |v| v[0] == 1).unwrap();
        assert_eq!(infected.indices(), &[1, 3, 5]);
        assert!(infected.set().same(&agents));
        let none = Subset::where_dat("none", &state, |v| v[1] > 9).unwrap();
        assert!(none.is_empty());
        // A Dat being written on the host cannot be read.
        let guard = state.data_mut();
        let e = Subset::where_dat("busy", &state, |_| true).unwrap_err();
        assert!(matches!(e, Error::HostBorrow { .. }), "{e:?}");
        drop(guard);
    }

    #[test]
    fn iteration_spaces_see_through_references() {
        let cells = Set::new("cells", 4).unwrap();
        let s = Subset::new("s", &cells, vec![1]).unwrap();
        let (set, sub) = IterationSpace::space(&cells);
        assert!(set.same(&cells) && sub.is_none());
        // As `par_loop!` binds it: the reference lives as long as the loop.
        let space = &&s;
        let (set, sub) = IterationSpace::space(space);
        assert!(set.same(&cells) && sub.unwrap().same(&s));
        assert_eq!(format!("{s:?}"), "Subset(\"s\": 1 of \"cells\")");
    }
}
