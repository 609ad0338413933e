//! Gives `librecuo.so` its SONAME, `librecuo.so.MAJOR.MINOR` while the major version is 0
//! (the C ABI may change between 0.x minors, never between patches: README, "Versions and the
//! C ABI") and `librecuo.so.MAJOR` from 1.0 on. A program linked against librecuo 0.1 then
//! records `librecuo.so.0.1` and refuses to start with a 0.2, instead of loading it. Only on
//! ELF targets, where `-soname` means this; `make install-c` installs the matching file
//! names (mk/c.mk).

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" | "illumos"
    );
    if elf {
        let major = env!("CARGO_PKG_VERSION_MAJOR");
        let minor = env!("CARGO_PKG_VERSION_MINOR");
        let soname = if major == "0" {
            format!("librecuo.so.{major}.{minor}")
        } else {
            format!("librecuo.so.{major}")
        };
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
