//! Run-time checks before a loop runs: `validate_loop` compares a loop's `ArgSpec`s with
//! its kernel's `KernelInfo` (count, types, dims, map arities and sets, access modes) and
//! returns the first problem, naming loop and argument. `LoopBorrows` then takes the
//! host borrows a running loop holds and releases them on drop. The `Runtime` calls both
//! before handing the loop to an `Executor`.
use crate::{
    Access, ArgData, ArgRef, ArgRoute, ArgSpec, Error, KernelInfo, MapIndex, ParamForm, ParamInfo, Result, Set,
    WholeArg,
};

/// A Dat read whole (`m(READ, list[..])`, or a spatial list's bins for
/// `list(NEAR)`): on the list's set, READ, into a slice parameter (or the
/// bins into a spatial parameter of the list's dimension), after the list's
/// first build, in a loop that is not distributed.
fn check_whole(
    at: &dyn Fn() -> ArgRef,
    param: &ParamInfo,
    arg: &ArgSpec<'_>,
    w: &WholeArg<'_>,
    set: &Set,
) -> Result<()> {
    let fail = |reason: String| Err(Error::MessageArg { at: at(), reason });
    let ArgData::Dat(d) = arg.data else {
        return Err(Error::GlobalThroughMap { at: at() });
    };
    if !d.set().same(w.set) {
        return fail(format!(
            "`{}` is on set `{}`, not a variable of message list `{}` (make one with `list.carry(&dat)`)",
            d.name(),
            d.set().name(),
            w.list
        ));
    }
    if arg.access != Access::Read {
        return fail(format!(
            "a message list is read only: pass `{}` as READ, not {:?}",
            d.name(),
            arg.access
        ));
    }
    if !matches!(param.form, ParamForm::Ragged { .. }) {
        return Err(Error::FormMismatch {
            at: at(),
            param: param.name.to_string(),
            detail: format!(
                "is `{}`, but a message list's variable `m(READ, list[..])` needs a slice: `&[T]` or `&[[T; D]]`",
                param.rust_type()
            ),
        });
    }
    if param.near != w.near {
        return fail(match (param.near, w.near) {
            (None, _) => {
                "the bins of a spatial list go to a `Spatial2d`/`Spatial3d`/`Discrete2d` parameter".to_string()
            }
            (Some(want), None) => format!(
                "a `{}` parameter needs a spatial list as `list(NEAR)`",
                want.type_name()
            ),
            (Some(want), Some(got)) => format!(
                "message list `{}` is {} (read by `{}`) but the kernel's parameter is `{}`, which needs {}",
                w.list,
                got.list_kind(),
                got.type_name(),
                want.type_name(),
                want.list_kind()
            ),
        });
    }
    let Some(count) = w.count.get() else {
        return fail(format!(
            "message list `{}` is read before it was built (or after a build that failed): call `{}.build()` after the loop that writes what it carries",
            w.list, w.list
        ));
    };
    // Loops read `count` values of the Dat: never more than it holds.
    if count > d.set().total_size() {
        return fail(format!(
            "message list `{}` counts {count} messages, more than `{}` holds ({})",
            w.list,
            d.name(),
            d.set().total_size()
        ));
    }
    if !w.count.filled(d.id()) {
        return fail(format!(
            "`{}` was carried by message list `{}` after the list's last build, so it holds no messages yet: build the list again (`{}.build()`) before reading it",
            d.name(),
            w.list,
            w.list
        ));
    }
    if !w.count.is_current(w.set) {
        return fail(format!(
            "message list `{}` changed since its build (its message set `{}` was permuted or resized): build it again",
            w.list,
            w.set.name()
        ));
    }
    if set.distribution().is_some() {
        return fail(format!(
            "the loop runs over distributed set `{}`: message lists across ranks are not supported yet",
            set.name()
        ));
    }
    Ok(())
}

/// Checks everything about a loop that is only known at run time: argument
/// count, element types, dims, map arities and indices, which sets maps start
/// from and point into, access modes against the kernel signature and against
/// each other. The first problem found is returned, naming loop and argument.
pub fn validate_loop(kernel: &KernelInfo, set: &Set, args: &[ArgSpec<'_>]) -> Result<()> {
    if kernel.params.len() != args.len() {
        return Err(Error::ArgCount {
            loop_name: kernel.name.to_string(),
            expected: kernel.params.len(),
            found: args.len(),
        });
    }
    for (index, (arg, param)) in args.iter().zip(kernel.params).enumerate() {
        let at = || ArgRef {
            loop_name: kernel.name.to_string(),
            index,
            name: arg.data.name().to_string(),
        };
        if arg.data.scalar() != param.scalar {
            return Err(Error::TypeMismatch {
                at: at(),
                param: param.name.to_string(),
                expected: param.scalar.rust_name(),
                found: arg.data.scalar().rust_name(),
            });
        }
        if arg.data.dim() != param.dim {
            return Err(Error::DimMismatch {
                at: at(),
                param: param.name.to_string(),
                expected: param.dim,
                found: arg.data.dim(),
            });
        }
        check_access(&at, param.name, param.mutable, arg.access)?;
        match arg.route {
            ArgRoute::Map(m) => m.map.check_current()?,
            ArgRoute::Ragged(r) => r.check_current()?,
            ArgRoute::Direct | ArgRoute::Whole(_) => {}
        }
        if let ArgRoute::Ragged(r) = arg.route {
            let ArgData::Dat(d) = arg.data else {
                return Err(Error::GlobalThroughMap { at: at() });
            };
            check_map_sets(&at, r.name(), r.from_set(), r.to_set(), set, d.set())?;
            if !matches!(param.form, ParamForm::Ragged { .. }) {
                return Err(Error::FormMismatch {
                    at: at(),
                    param: param.name.to_string(),
                    detail: format!(
                        "is `{}`, but a ragged-map argument `d(ACCESS, r[..])` needs a slice: `&[T]` or `&[[T; D]]`",
                        param.rust_type()
                    ),
                });
            }
            if !matches!(arg.access, Access::Read | Access::Inc) {
                return Err(Error::FormMismatch {
                    at: at(),
                    param: param.name.to_string(),
                    detail: format!(
                        "a ragged-map argument is READ or INC, not {:?}: an element's targets may repeat or be shared, so a write would have no single meaning",
                        arg.access
                    ),
                });
            }
        }
        if let ArgRoute::Whole(w) = &arg.route {
            check_whole(&at, param, arg, w, set)?;
        } else if let (Some(kind), ParamForm::Ragged { .. }) = (param.near, param.form) {
            return Err(Error::FormMismatch {
                at: at(),
                param: param.name.to_string(),
                detail: format!(
                    "belongs to a `{}` parameter: pass a spatial message list as `list(NEAR)`",
                    kind.type_name()
                ),
            });
        }
        match (arg.data, arg.route) {
            (_, ArgRoute::Ragged(_) | ArgRoute::Whole(_)) => {}
            (ArgData::Global(_), ArgRoute::Map(_)) => return Err(Error::GlobalThroughMap { at: at() }),
            (ArgData::Global(_), ArgRoute::Direct) => {
                if matches!(arg.access, Access::Write | Access::Rw) {
                    return Err(Error::GlobalAccess {
                        at: at(),
                        access: arg.access,
                    });
                }
                check_form(&at, param, false)?;
            }
            (ArgData::Dat(d), ArgRoute::Direct) => {
                if param.fate && !d.set().same(set) {
                    // Not "through a map": `life(FATE)` takes none.
                    return Err(Error::FormMismatch {
                        at: at(),
                        param: param.name.to_string(),
                        detail: format!(
                            "(`&mut Fate`, passed as `life(FATE)`) decides births and deaths of set `{}`, but the \
                             loop runs over `{}`; run the loop over `{}` (or a subset of it), or pass the Lifecycle \
                             of `{}`",
                            d.set().name(),
                            set.name(),
                            d.set().name(),
                            set.name()
                        ),
                    });
                }
                if !d.set().same(set) {
                    return Err(Error::DirectSetMismatch {
                        at: at(),
                        dat_set: d.set().name().to_string(),
                        iter_set: set.name().to_string(),
                    });
                }
                check_form(&at, param, false)?;
            }
            (ArgData::Dat(d), ArgRoute::Map(m)) => {
                let map = m.map;
                check_map_sets(&at, map.name(), map.from_set(), map.to_set(), set, d.set())?;
                if map.is_long() && !m.long_view {
                    // The identity of a long set: the body reads 32-bit entries.
                    return Err(Error::LongMapUnsupported {
                        map: map.name().to_string(),
                        what: format!("{} (through a Map: make it with LongMap::identity)", at()),
                    });
                }
                match m.index {
                    MapIndex::Entry(i) => {
                        if i >= map.arity() {
                            return Err(Error::MapIndexOutOfRange {
                                at: at(),
                                map: map.name().to_string(),
                                index: i,
                                arity: map.arity(),
                            });
                        }
                        check_form(&at, param, false)?;
                    }
                    MapIndex::All => {
                        check_form(&at, param, true)?;
                        if let ParamForm::Table { arity } = param.form {
                            if arity != map.arity() {
                                return Err(Error::ArityMismatch {
                                    at: at(),
                                    param: param.name.to_string(),
                                    map: map.name().to_string(),
                                    expected: arity,
                                    found: map.arity(),
                                });
                            }
                        }
                    }
                }
            }
        }
        check_once(&at, kernel, args, index)?;
        if let Some((first_index, first)) = args[..index]
            .iter()
            .enumerate()
            .find(|(_, a)| a.data.id() == arg.data.id() && a.access != arg.access)
        {
            return Err(Error::ConflictingAccess {
                at: at(),
                access: arg.access,
                first_index,
                first_access: first.access,
            });
        }
        // Same mode from here on: a write reached both directly and through a
        // map is the one combination the planner cannot make race-free.
        if let Some((first_index, first)) = args[..index]
            .iter()
            .enumerate()
            .find(|(_, a)| a.data.id() == arg.data.id() && arg.access.writes() && a.is_indirect() != arg.is_indirect())
        {
            return Err(Error::DirectAndIndirectWrite {
                at: at(),
                name: arg.data.name().to_string(),
                access: arg.access,
                how: reach(arg),
                first_index,
                first_how: reach(first),
            });
        }
        // Two stores of the same values: backends that stage arguments keep
        // the last write-back, one that passes pointers applies both.
        // Reductions (INC, MIN, MAX) twice are applied twice everywhere.
        if let Some(first_index) = args[..index].iter().position(|a| {
            a.data.id() == arg.data.id() && matches!(arg.access, Access::Write | Access::Rw) && always_alias(a, arg)
        }) {
            return Err(Error::RepeatedWrite {
                at: at(),
                name: arg.data.name().to_string(),
                access: arg.access,
                how: reach(arg),
                first_index,
            });
        }
    }
    Ok(())
}

/// Whether two arguments of one Dat reach the same values for every
/// element: both directly, through one ragged map, or through one map with
/// the same entry (or all of its entries on either side). Different entries
/// of one map meet only where a row repeats a target, which is allowed.
fn always_alias(a: &ArgSpec<'_>, b: &ArgSpec<'_>) -> bool {
    match (a.route, b.route) {
        (ArgRoute::Direct, ArgRoute::Direct) => true,
        (ArgRoute::Map(x), ArgRoute::Map(y)) => {
            x.map.id() == y.map.id()
                && match (x.index, y.index) {
                    (MapIndex::Entry(i), MapIndex::Entry(j)) => i == j,
                    _ => true,
                }
        }
        (ArgRoute::Ragged(x), ArgRoute::Ragged(y)) => x.id() == y.id(),
        _ => false,
    }
}

/// `life(FATE)` and `s(DRAW)` each give the kernel one value per element
/// that a second argument of the same Lifecycle or streams would repeat: two
/// Fates of one agent (the second's store overwrites the first's deaths and
/// births) or two identical streams. Either is refused.
fn check_once(at: &dyn Fn() -> ArgRef, kernel: &KernelInfo, args: &[ArgSpec<'_>], index: usize) -> Result<()> {
    let param = &kernel.params[index];
    // A `&mut Philox`'s first hidden parameter is the set's ids, a Dat each
    // `RandomStreams` keeps for itself: the same Dat is the same streams.
    let random_ids = |p: &ParamInfo, a: &ArgSpec<'_>| p.random && matches!(a.data, ArgData::Dat(_));
    if !(param.fate || random_ids(param, &args[index])) {
        return Ok(());
    }
    let id = args[index].data.id();
    let Some(first) = args[..index]
        .iter()
        .zip(kernel.params)
        .position(|(a, p)| a.data.id() == id && if param.fate { p.fate } else { random_ids(p, a) })
    else {
        return Ok(());
    };
    let name = args[index].data.name();
    let reason = if param.fate {
        format!(
            "`life(FATE)` of set `{}`'s Lifecycle is given twice (argument {first} too): an agent has one Fate per \
             loop, and the second would overwrite the deaths and births the first decided; give the kernel one \
             `&mut Fate` parameter",
            name.strip_suffix(".fates").unwrap_or(name)
        )
    } else {
        format!(
            "random streams `{}` are given twice (argument {first} too), and both parameters would get the same \
             stream; draw every number from one `&mut Philox` parameter, or pass a second `RandomStreams` made \
             with another seed",
            name.strip_suffix(".stream_ids").unwrap_or(name)
        )
    };
    Err(Error::RepeatedArg { at: at(), reason })
}

/// A map (fixed or ragged) must start from the iteration set and point into
/// the Dat's set.
fn check_map_sets(
    at: &dyn Fn() -> ArgRef,
    map: &str,
    from: &Set,
    to: &Set,
    iter_set: &Set,
    dat_set: &Set,
) -> Result<()> {
    if !from.same(iter_set) {
        return Err(Error::MapFromWrongSet {
            at: at(),
            map: map.to_string(),
            map_from: from.name().to_string(),
            iter_set: iter_set.name().to_string(),
        });
    }
    if !to.same(dat_set) {
        return Err(Error::MapIntoWrongSet {
            at: at(),
            map: map.to_string(),
            map_to: to.name().to_string(),
            dat_set: dat_set.name().to_string(),
        });
    }
    Ok(())
}

/// "directly" or "through map `m`", for errors.
fn reach(arg: &ArgSpec<'_>) -> String {
    match arg.map_name() {
        None => "directly".to_string(),
        Some(m) => format!("through map `{m}`"),
    }
}

fn check_access(at: &dyn Fn() -> ArgRef, param: &str, mutable: bool, access: Access) -> Result<()> {
    let hint = match (mutable, access) {
        (true, Access::Read) => "make the parameter `&`, or pass the argument as WRITE, RW, INC, MIN or MAX",
        (false, a) if a != Access::Read => "make the parameter `&mut`, or pass the argument as READ",
        _ => return Ok(()),
    };
    Err(Error::AccessMismatch {
        at: at(),
        param: param.to_string(),
        mutability: if mutable { "`&mut`" } else { "`&`" },
        access,
        hint,
    })
}

fn check_form(at: &dyn Fn() -> ArgRef, param: &crate::ParamInfo, whole_map: bool) -> Result<()> {
    if matches!(param.form, ParamForm::Ragged { .. }) {
        return Err(Error::FormMismatch {
            at: at(),
            param: param.name.to_string(),
            detail: format!(
                "is `{}`, a slice, which takes the targets of a ragged map: write `d(ACCESS, r[..])`",
                param.rust_type()
            ),
        });
    }
    let table = matches!(param.form, ParamForm::Table { .. });
    let detail = match (whole_map, table) {
        (true, false) => format!(
            "is `{}`, but a whole-map argument `d(ACCESS, m)` needs `&[[T; D]; A]`; for one entry write `d(ACCESS, m[i])`",
            param.rust_type()
        ),
        (false, true) => format!(
            "is `{}`, which takes all entries of a map: write `d(ACCESS, m)`",
            param.rust_type()
        ),
        _ => return Ok(()),
    };
    Err(Error::FormMismatch {
        at: at(),
        param: param.name.to_string(),
        detail,
    })
}

/// The host borrows a running loop holds: shared for data it only reads,
/// exclusive for data it writes. Released on drop.
pub struct LoopBorrows<'a> {
    taken: Vec<(&'a crate::BorrowFlag, bool)>,
}

impl<'a> LoopBorrows<'a> {
    /// Borrows every distinct Dat and Global of the loop, or returns which one
    /// is borrowed on the host.
    pub fn take(kernel: &KernelInfo, args: &'a [ArgSpec<'a>]) -> Result<LoopBorrows<'a>> {
        let mut borrows = LoopBorrows { taken: Vec::new() };
        for (index, arg) in args.iter().enumerate() {
            if args[..index].iter().any(|a| a.data.id() == arg.data.id()) {
                continue;
            }
            let exclusive = arg.access.writes();
            let flag = arg.data.borrow_flag();
            flag.try_borrow(exclusive).map_err(|how| Error::Borrowed {
                at: ArgRef {
                    loop_name: kernel.name.to_string(),
                    index,
                    name: arg.data.name().to_string(),
                },
                name: arg.data.name().to_string(),
                how,
            })?;
            borrows.taken.push((flag, exclusive));
        }
        Ok(borrows)
    }
}

impl Drop for LoopBorrows<'_> {
    fn drop(&mut self) {
        for (flag, exclusive) in &self.taken {
            flag.release(*exclusive);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ArgData, Dat, Global, Map, MapIndex, ParamInfo, RaggedMap, ScalarType};

    const SLICE: [ParamInfo; 1] = [ParamInfo::ragged("x", ScalarType::F64, 1, false, false)];
    const SLICE_MUT: [ParamInfo; 1] = [ParamInfo::ragged("x", ScalarType::F64, 1, true, false)];
    const ARRAY: [ParamInfo; 1] = [ParamInfo::array("x", ScalarType::F64, 1, false)];

    fn kernel(params: &'static [ParamInfo]) -> KernelInfo {
        KernelInfo {
            name: "k",
            params,
            c_source: "",
            uses: crate::KernelUses::NOTHING,
        }
    }

    /// What `par_loop!` refuses at compile time is refused at run time too,
    /// for argument lists built by hand.
    #[test]
    fn ragged_arguments_are_checked_at_run_time() {
        let nodes = Set::new("nodes", 3).unwrap();
        let r = RaggedMap::new("r", &nodes, &nodes, vec![0, 1, 1, 3], vec![2, 0, 1]).unwrap();
        let m = Map::new("m", &nodes, &nodes, 1, vec![1, 2, 0]).unwrap();
        let x = Dat::<f64>::zeros("x", &nodes, 1).unwrap();
        let g = Global::<f64>::scalar("g", 0.0);
        let ragged = |access| ArgSpec::through_ragged(ArgData::Dat(&x), access, &r);
        assert!(validate_loop(&kernel(&SLICE), &nodes, &[ragged(Access::Read)]).is_ok());
        assert!(validate_loop(&kernel(&SLICE_MUT), &nodes, &[ragged(Access::Inc)]).is_ok());
        let err = |params, arg| validate_loop(&kernel(params), &nodes, &[arg]).unwrap_err().to_string();
        let global = ArgSpec::through_ragged(ArgData::Global(&g), Access::Read, &r);
        assert!(err(&SLICE, global).contains("Global cannot be accessed through a map"));
        assert!(err(&ARRAY, ragged(Access::Read)).contains("needs a slice"));
        assert!(err(&SLICE_MUT, ragged(Access::Rw)).contains("READ or INC"));
        let direct = ArgSpec::direct(ArgData::Dat(&x), Access::Read);
        assert!(err(&SLICE, direct).contains("write `d(ACCESS, r[..])`"));
        let through_map = ArgSpec::through_map(ArgData::Dat(&x), Access::Read, &m, MapIndex::Entry(0));
        assert!(err(&SLICE, through_map).contains("a slice"));
    }
}
