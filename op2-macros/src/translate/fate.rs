//! Births and deaths: the lowered prologue `let mut fate =
//! Fate::new(op2_fate_fate);` points a local at the agent's flags and
//! clears them, and `fate.die()` / `fate.spawn()` set a flag (the values of
//! `op2_kernel_abi::FATE_DIES` / `FATE_SPAWNS`).

use op2_kernel_abi::{FATE_DIES, FATE_SPAWNS};
use syn::spanned::Spanned;
use syn::{Expr, ExprCall, ExprMethodCall};

use super::names::Kind;
use super::types::ETy;
use super::Translator;

/// Whether a call is `Fate::new(..)` (only in the prologue `#[op2::kernel]`
/// writes for a `&mut Fate` parameter).
pub(super) fn is_fate_new(c: &ExprCall) -> bool {
    let Expr::Path(p) = &*c.func else { return false };
    let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
    crate::subset::is_fate_new(&segs)
}

impl Translator {
    /// `let mut fate = Fate::new(op2_fate_fate);`: a pointer to the flags, cleared.
    pub(super) fn local_fate(&mut self, name: &str, init: Option<&Expr>, span: proc_macro2::Span) {
        let args = match init {
            Some(Expr::Call(c)) => self.hidden_args(c),
            _ => Vec::new(),
        };
        let [flags] = args.as_slice() else {
            self.err(span, "a fate parameter is made by op2 only: declare `fate: &mut Fate`");
            return;
        };
        let cname = self.declare_name(name);
        self.out.line(&format!("int *{cname} = {flags};"));
        self.out.line(&format!("*{cname} = 0;"));
        self.bind(name, cname, ETy::Fate, Kind::Local);
    }

    /// `fate.die()` / `fate.spawn()`: sets the flag.
    pub(super) fn fate_call(&mut self, m: &ExprMethodCall) -> String {
        let flag = match m.method.to_string().as_str() {
            "die" => FATE_DIES,
            "spawn" => FATE_SPAWNS,
            other => {
                self.err(
                    m.method.span(),
                    format!("`.{other}()`: a fate offers `.die()` and `.spawn()` only"),
                );
                return String::new();
            }
        };
        if !m.args.is_empty() {
            self.err(m.span(), format!("`.{}()` takes no arguments", m.method));
            return String::new();
        }
        let fate = self.expr(&m.receiver, None);
        format!("((*{fate}) |= {flag})")
    }
}
