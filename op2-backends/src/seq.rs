//! The sequential backend, `SeqExecutor`: it runs a loop's body on one thread, elements
//! in natural order, with one set of reduction partials. It implements op2-core's
//! `Executor` trait and is the reference every other backend is tested against.
use op2_core::{Executor, LoopBody, ParLoop, ReductionLayout, Result};

/// The sequential backend: one thread, elements in natural order, one set of
/// reduction partials. The reference for every other backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct SeqExecutor;

impl Executor for SeqExecutor {
    fn name(&self) -> &'static str {
        "seq"
    }

    unsafe fn execute(&self, lp: &ParLoop<'_>, body: &LoopBody<'_>) -> Result<()> {
        let layout = ReductionLayout::new(lp.args);
        let mut partials = layout.new_partials(lp.args, 1);
        body(
            lp.range.clone(),
            &mut layout.partials(&mut partials).with_wide_vectors(lp.wide_vectors),
        );
        layout.combine_all(lp.args, &partials);
        Ok(())
    }
}
