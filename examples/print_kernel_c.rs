//! Prints the C translation of the Airfoil kernels (what the JIT compiles).
use op2::Kernel;
use op2_airfoil::kernels::*;

fn main() {
    for info in [
        &<save_soln as Kernel>::INFO,
        &<adt_calc as Kernel>::INFO,
        &<res_calc as Kernel>::INFO,
        &<bres_calc as Kernel>::INFO,
        &<update as Kernel>::INFO,
    ] {
        println!("{}", info.c_source);
    }
}
