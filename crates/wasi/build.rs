//! Builds the `toolbox` sandbox image (`sandbox-images/toolbox`) for `wasm32-wasip1` and puts
//! it, with its manifest, in `OUT_DIR` for the library to embed.
//!
//! It never fails the build: when the target is not installed or the nested build fails, it
//! prints a `cargo:warning`, embeds an empty image, and `warden_wasi::image("toolbox")` returns
//! an error carrying the reason at run time.
//!
//! The nested cargo gets its own target directory (`<target>/toolbox`): sharing the outer
//! build's directory would wait forever on the lock the outer cargo holds.

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip1";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let image = manifest_dir.join("../../sandbox-images/toolbox");
    for f in ["src", "Cargo.toml", "Cargo.lock", "manifest.json"] {
        println!("cargo:rerun-if-changed={}", image.join(f).display());
    }
    println!("cargo:rerun-if-env-changed=WARDEN_WASI_SKIP_IMAGES");

    let manifest = std::fs::read_to_string(image.join("manifest.json")).unwrap_or_default();
    let status = match build(&image, &out) {
        Ok(wasm) => match std::fs::copy(&wasm, out.join("toolbox.wasm")) {
            Ok(_) => String::from("ok"),
            Err(e) => format!("copying `{}` failed: {e}", wasm.display()),
        },
        Err(why) => why,
    };
    if status != "ok" {
        println!("cargo:warning=the toolbox WASI image was not built: {}", one_line(&status));
        let _ = std::fs::write(out.join("toolbox.wasm"), b"");
    }
    let _ = std::fs::write(out.join("toolbox.manifest.json"), manifest);
    println!("cargo:rustc-env=WARDEN_TOOLBOX_STATUS={}", one_line(&status));
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs the nested `cargo build`; the built `.wasm`, or why not.
fn build(image: &Path, out: &Path) -> Result<PathBuf, String> {
    if std::env::var_os("WARDEN_WASI_SKIP_IMAGES").is_some() {
        return Err(String::from("WARDEN_WASI_SKIP_IMAGES is set"));
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if !sysroot.join("lib/rustlib").join(TARGET).join("lib").is_dir() {
        return Err(format!(
            "the `{TARGET}` target is not installed for this toolchain (help: `rustup target add {TARGET}`)"
        ));
    }
    // OUT_DIR is <target>[/<triple>]/<profile>/build/<pkg>-<hash>/out.
    let target_dir = out
        .ancestors()
        .nth(4)
        .map_or_else(|| out.join("toolbox-target"), |t| t.join("toolbox"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "--locked", "--target", TARGET, "--manifest-path"])
        .arg(image.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's settings are not the image's: flags (sanitizers, coverage), wrappers
    // (clippy-driver), profiles and target overrides.
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k.starts_with("CARGO_PROFILE_")
            || k.starts_with("CARGO_TARGET_")
            || k.starts_with("CARGO_BUILD_")
            || k.starts_with("CARGO_ENCODED_")
            || k.starts_with("__CARGO")
            || matches!(k.as_ref(), "RUSTFLAGS" | "RUSTDOCFLAGS" | "RUSTC_WORKSPACE_WRAPPER" | "CLIPPY_ARGS" | "CARGO_TARGET_DIR")
        {
            cmd.env_remove(&key);
        }
    }
    let output = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = err.lines().rev().take(6).collect();
        return Err(format!(
            "`cargo build --target {TARGET}` of the toolbox failed: {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ));
    }
    let wasm = target_dir.join(TARGET).join("release/toolbox.wasm");
    if wasm.is_file() {
        Ok(wasm)
    } else {
        Err(format!("the nested build left no `{}`", wasm.display()))
    }
}
