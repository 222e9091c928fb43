//! The system C compiler for the `jit` backend: `Compiler` checks that the command runs,
//! records its identity and flags for the code cache key, and compiles a generated C
//! source into a shared object. A failed build hands back the compiler's output.
use std::path::Path;
use std::process::Command;

use op2_core::{Error, Result};

/// The system C compiler: the command, the flags, and its identity (the first
/// line of `--version`), which is part of every cache key.
#[derive(Clone, Debug)]
pub struct Compiler {
    command: String,
    flags: Vec<String>,
    identity: String,
}

impl Compiler {
    /// Finds out whether `command` runs, and what it is.
    pub fn detect(command: &str, flags: &str) -> Result<Compiler> {
        let out = Command::new(command)
            .arg("--version")
            .output()
            .map_err(|e| Error::CompilerNotFound {
                command: command.to_string(),
                reason: e.to_string(),
            })?;
        if !out.status.success() {
            return Err(Error::CompilerNotFound {
                command: command.to_string(),
                reason: format!("`{command} --version` exited with {}", out.status),
            });
        }
        let identity = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        Ok(Compiler {
            command: command.to_string(),
            flags: flags.split_whitespace().map(str::to_string).collect(),
            identity,
        })
    }

    /// What the cache key includes about the compiler.
    pub fn key_material(&self) -> String {
        format!("{}\n{}\n{}", self.command, self.identity, self.flags.join(" "))
    }

    /// Compiles `source` into the shared object `output`; on failure returns
    /// the compiler's output.
    pub fn compile(&self, source: &Path, output: &Path) -> std::result::Result<(), String> {
        let out = Command::new(&self.command)
            .args(&self.flags)
            .args(["-shared", "-fPIC", "-o"])
            .arg(output)
            .arg(source)
            .arg("-lm")
            .output()
            .map_err(|e| format!("cannot run `{}`: {e}", self.command))?;
        if out.status.success() {
            Ok(())
        } else {
            let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
            log.push_str(&String::from_utf8_lossy(&out.stdout));
            Err(format!(
                "`{} {} -shared -fPIC ...` failed ({}):\n{log}",
                self.command,
                self.flags.join(" "),
                out.status
            ))
        }
    }
}
