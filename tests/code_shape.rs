//! The code keeps the shape a reader can follow: no function in the crates' sources runs over 150 lines.
//!
//! Every `.rs` file under `src/` and `crates/*/src/` is parsed with `syn` (the parser Rust's own
//! macros use), and each function, method and trait method with a body is measured from its
//! `fn` keyword to its closing brace, so comments, blank lines and nested closures count as a
//! reader sees them. A long function is split where a reader would name the parts.

use std::path::PathBuf;

use syn::visit::{self, Visit};

use crate::support::tree::files;

/// The longest a function may be, in lines.
const LIMIT: usize = 150;

/// One measured function.
#[derive(Debug, PartialEq)]
struct Measured {
    name: String,
    line: usize,
    lines: usize,
}

/// Collects the length of every function with a body in one file.
#[derive(Default)]
struct Lengths {
    found: Vec<Measured>,
}

impl Lengths {
    fn measure(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let first = sig.fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        self.found.push(Measured { name: sig.ident.to_string(), line: first, lines: last - first + 1 });
    }
}

impl<'ast> Visit<'ast> for Lengths {
    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.measure(&item.sig, &item.block);
        visit::visit_item_fn(self, item);
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.measure(&item.sig, &item.block);
        visit::visit_impl_item_fn(self, item);
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            self.measure(&item.sig, block);
        }
        visit::visit_trait_item_fn(self, item);
    }
}

/// Every function of `source`, with its length.
fn measure(source: &str) -> syn::Result<Vec<Measured>> {
    let file = syn::parse_file(source)?;
    let mut lengths = Lengths::default();
    lengths.visit_file(&file);
    Ok(lengths.found)
}

/// The `.rs` files of the crates' sources: `src/` and each `crates/*/src/`.
fn sources() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from("src")];
    if let Ok(crates) = std::fs::read_dir("crates") {
        roots.extend(crates.map(|entry| entry.unwrap().path().join("src")).filter(|src| src.is_dir()));
    }
    roots.iter().flat_map(|root| files(root, &[".rs"])).collect()
}

#[test]
fn the_measure_counts_from_fn_to_the_closing_brace() {
    let body = "    let _ = 1;\n".repeat(LIMIT - 1);
    let source =
        format!("/// Doc.\n#[inline]\nfn long() {{\n{body}}}\nimpl S {{\n    fn short(&self) {{}}\n}}\n");
    assert_eq!(
        measure(&source).unwrap(),
        [
            Measured { name: "long".into(), line: 3, lines: LIMIT + 1 },
            Measured { name: "short".into(), line: 3 + LIMIT + 2, lines: 1 },
        ]
    );
}

#[test]
fn no_function_is_over_150_lines() {
    let files = sources();
    assert!(files.iter().any(|f| f.ends_with("lib.rs")), "walked {} files", files.len());
    let mut over = Vec::new();
    let mut functions = 0;
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        let measured = measure(&source).unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()));
        functions += measured.len();
        over.extend(
            measured
                .into_iter()
                .filter(|m| m.lines > LIMIT)
                .map(|m| format!("{}:{} `{}` is {} lines", file.display(), m.line, m.name, m.lines)),
        );
    }
    assert!(functions > 1000, "measured only {functions} functions in {} files", files.len());
    assert!(
        over.is_empty(),
        "functions over {LIMIT} lines (split them where a reader would name the parts):\n{}",
        over.join("\n")
    );
}
