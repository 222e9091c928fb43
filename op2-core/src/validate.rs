use crate::{Access, ArgData, ArgRef, ArgSpec, Error, KernelInfo, MapIndex, ParamForm, Result, Set};

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
        match (arg.data, arg.map) {
            (ArgData::Global(_), Some(_)) => return Err(Error::GlobalThroughMap { at: at() }),
            (ArgData::Global(_), None) => {
                if matches!(arg.access, Access::Write | Access::Rw) {
                    return Err(Error::GlobalAccess {
                        at: at(),
                        access: arg.access,
                    });
                }
                check_form(&at, param, false)?;
            }
            (ArgData::Dat(d), None) => {
                if !d.set().same(set) {
                    return Err(Error::DirectSetMismatch {
                        at: at(),
                        dat_set: d.set().name().to_string(),
                        iter_set: set.name().to_string(),
                    });
                }
                check_form(&at, param, false)?;
            }
            (ArgData::Dat(d), Some(m)) => {
                let map = m.map;
                if !map.from_set().same(set) {
                    return Err(Error::MapFromWrongSet {
                        at: at(),
                        map: map.name().to_string(),
                        map_from: map.from_set().name().to_string(),
                        iter_set: set.name().to_string(),
                    });
                }
                if !map.to_set().same(d.set()) {
                    return Err(Error::MapIntoWrongSet {
                        at: at(),
                        map: map.name().to_string(),
                        map_to: map.to_set().name().to_string(),
                        dat_set: d.set().name().to_string(),
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
    }
    Ok(())
}

/// "directly" or "through map `m`", for errors.
fn reach(arg: &ArgSpec<'_>) -> String {
    match arg.map {
        None => "directly".to_string(),
        Some(m) => format!("through map `{}`", m.map.name()),
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
