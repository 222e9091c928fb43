//! Which of a device loop's Dats lie in columns (struct of arrays) and
//! which in rows: decided per Dat, before the loop's program is chosen (its
//! code indexes columns otherwise), from the Dat's own choice, the
//! runtime's, and how the Dat has been used (`op2_core::DeviceLayout`).

use op2_core::{ArgData, ArgRoute, ColumnShape, DeviceLayout, ParLoop};

/// Per argument, the column shape its Dat's device copy takes in this
/// loop, or `None` for rows (Globals, Dats of one value per element, which
/// are the same either way, and Dats the loop reaches through a ragged map
/// or reads whole, whose kernels hold row pointers). `default` is the
/// runtime's choice for Dats that leave it to the runtime, and
/// `device_prefers` whether its own default, `Auto`, means columns on this
/// device (a GPU) or rows (a CPU).
pub fn column_shapes(lp: &ParLoop<'_>, default: DeviceLayout, device_prefers: bool) -> Vec<Option<ColumnShape>> {
    lp.args
        .iter()
        .map(|arg| {
            let ArgData::Dat(d) = arg.data else { return None };
            if d.dim() < 2 {
                return None;
            }
            let same_dat = || lp.args.iter().filter(|a| a.data.id() == d.id());
            let mut slot = d.device().lock();
            if same_dat().any(|a| matches!(a.route, ArgRoute::Ragged(_) | ArgRoute::Whole(_))) {
                slot.rows_needed = true;
                return None;
            }
            let columns = match (slot.requested, default) {
                (DeviceLayout::ArrayOfStructs, _) => false,
                (DeviceLayout::StructOfArrays, _) => true,
                (DeviceLayout::Auto, DeviceLayout::ArrayOfStructs) => false,
                (DeviceLayout::Auto, DeviceLayout::StructOfArrays) => !slot.rows_needed,
                // Agents' Dats change length, and their device work (sorts,
                // births, migration) moves elements whole.
                (DeviceLayout::Auto, DeviceLayout::Auto) => {
                    device_prefers && !slot.rows_needed && !d.set().is_dynamic()
                }
            };
            columns.then(|| ColumnShape {
                dim: d.dim(),
                value_bytes: d.scalar().size(),
            })
        })
        .collect()
}
