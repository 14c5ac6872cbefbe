//! The shape of the crates, read from their source as the compiler reads it: the module
//! tree from `mod` declarations (a `#[path]` included, so a module's place in the tree is
//! its real module path, not where its file is), and what each module uses: its `use`
//! items and every `crate::`, `super::` or `self::` path in its code, macro arguments
//! included, a name the crate root re-exports (`crate::Drive`) counted as the module it
//! comes from; test modules apart. Modules never form a circle, every file is where its
//! module path says, and no module of the simulator uses one of a higher layer (LAYERS).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

type ModPath = Vec<String>;

/// The simulator's layers, lowest first: a module uses its own layer or lower ones. Each
/// layer is what the ones above are built from: plumbing that knows no drive; the drive's
/// physical parameters; the hardware built from them; the FTL on that hardware and the
/// workload (phases as I/O streams); the engine, the drive in virtual time running a
/// workload through host and FTL; fio's workload, run on the engine's drive.
const LAYERS: &[(&str, &[&str])] = &[
    ("plumbing", &["util"]),
    ("parameters", &["profile"]),
    ("hardware", &["channel", "retry", "nand", "host", "power"]),
    ("flash translation and workload", &["ftl", "workload"]),
    ("the drive in virtual time", &["engine"]),
    ("fio's workload on the drive", &["fiojob"]),
];

/// A crate as read from its source.
struct Crate {
    /// Every module (its path from the crate root) and the file it is in.
    files: BTreeMap<ModPath, PathBuf>,
    /// The other modules each module uses (not its ancestors or descendants).
    uses: BTreeMap<ModPath, BTreeSet<ModPath>>,
}

fn crate_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

fn is_test_mod(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .map(|l| l.tokens.to_string() == "test")
                .unwrap_or(false)
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.path().is_ident("path"))
        .and_then(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
}

/// The paths of a `use` tree, each with the name it brings in (the last segment, or the
/// alias of `as`; a glob has none).
fn use_paths(
    t: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match t {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.push((prefix.clone(), prefix.last().cloned()))
        }
        syn::UseTree::Name(n) => out.push((
            [prefix.clone(), vec![n.ident.to_string()]].concat(),
            Some(n.ident.to_string()),
        )),
        syn::UseTree::Rename(r) => out.push((
            [prefix.clone(), vec![r.ident.to_string()]].concat(),
            Some(r.rename.to_string()),
        )),
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(g) => g.items.iter().for_each(|i| use_paths(i, prefix, out)),
    }
}

/// `crate::a::b`, `super::x`, `self::y` paths in a macro's tokens (syn leaves them unparsed).
fn token_paths(tokens: proc_macro2::TokenStream, out: &mut Vec<Vec<String>>) {
    let mut run: Vec<String> = Vec::new(); // the path being read
    let mut colons = 0; // ':' punctuation since its last segment
    for tt in tokens {
        match tt {
            proc_macro2::TokenTree::Ident(i) => {
                let s = i.to_string();
                if !run.is_empty() && colons == 2 {
                    run.push(s);
                } else {
                    if run.len() > 1 {
                        out.push(std::mem::take(&mut run));
                    }
                    run = if matches!(s.as_str(), "crate" | "super" | "self") {
                        vec![s]
                    } else {
                        Vec::new()
                    };
                }
                colons = 0;
            }
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() => {
                colons += 1
            }
            other => {
                if run.len() > 1 {
                    out.push(std::mem::take(&mut run));
                }
                run.clear();
                colons = 0;
                if let proc_macro2::TokenTree::Group(g) = other {
                    token_paths(g.stream(), out);
                }
            }
        }
    }
    if run.len() > 1 {
        out.push(run);
    }
}

/// Paths a module's own items name (nested modules are modules of their own).
#[derive(Default)]
struct Names {
    paths: Vec<Vec<String>>,
    /// name -> the path a `use` item brings it in from
    imports: Vec<(String, Vec<String>)>,
}

impl<'a> Visit<'a> for Names {
    fn visit_item_mod(&mut self, _: &'a syn::ItemMod) {}
    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        let mut out = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut out);
        for (p, name) in out {
            if let Some(n) = name {
                self.imports.push((n, p.clone()));
            }
            self.paths.push(p);
        }
    }
    fn visit_path(&mut self, p: &'a syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if matches!(
            segs.first().map(String::as_str),
            Some("crate" | "super" | "self")
        ) {
            self.paths.push(segs);
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        token_paths(m.tokens.clone(), &mut self.paths);
        syn::visit::visit_macro(self, m);
    }
}

/// A path as module `m` names it, from the crate root (None: an external crate, or a name
/// a `use` brought in, which its `use` item already counted).
fn absolute(m: &[String], p: &[String]) -> Option<ModPath> {
    let mut abs: ModPath = m.to_vec();
    let mut rest = p;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            abs.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                abs.pop();
                rest = &rest[1..];
            }
        }
        _ if m.is_empty() => {} // the crate root names its children directly
        _ => return None,
    }
    abs.extend(rest.iter().cloned());
    Some(abs)
}

fn load(root: &Path) -> Crate {
    let mut names: BTreeMap<ModPath, Names> = BTreeMap::new();
    let mut files: BTreeMap<ModPath, PathBuf> = BTreeMap::new();
    // (module path, its items, the directory its children's files are in, its file's own
    // directory: where a child's #[path] starts)
    fn walk(
        path: ModPath,
        items: &[syn::Item],
        dir: &Path,
        here: &Path,
        names: &mut BTreeMap<ModPath, Names>,
        files: &mut BTreeMap<ModPath, PathBuf>,
    ) {
        let mut n = Names::default();
        items.iter().for_each(|it| n.visit_item(it));
        names.insert(path.clone(), n);
        for it in items {
            let syn::Item::Mod(m) = it else { continue };
            if is_test_mod(&m.attrs) {
                continue;
            }
            let name = m.ident.to_string();
            let child: ModPath = [path.clone(), vec![name.clone()]].concat();
            if let Some((_, inner)) = &m.content {
                files.insert(child.clone(), files[&path].clone());
                walk(child, inner, &dir.join(&name), here, names, files);
                continue;
            }
            let file = match path_attr(&m.attrs) {
                Some(p) => here.join(p),
                None if dir.join(format!("{name}.rs")).exists() => dir.join(format!("{name}.rs")),
                None => dir.join(&name).join("mod.rs"),
            };
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let parsed =
                syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            // a file's children live beside it (foo.rs -> foo/), or in its directory (mod.rs)
            let sub = if file.file_name().map(|f| f == "mod.rs").unwrap_or(false) {
                file.parent().unwrap().to_path_buf()
            } else {
                file.with_extension("")
            };
            files.insert(child.clone(), file.clone());
            walk(
                child,
                &parsed.items,
                &sub,
                file.parent().unwrap(),
                names,
                files,
            );
        }
    }
    let lib = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| root.join(f))
        .find(|p| p.exists())
        .expect("lib.rs");
    let parsed = syn::parse_file(&std::fs::read_to_string(&lib).unwrap()).unwrap();
    files.insert(Vec::new(), lib.clone());
    walk(
        Vec::new(),
        &parsed.items,
        root,
        root,
        &mut names,
        &mut files,
    );
    let modules: BTreeSet<ModPath> = files.keys().cloned().collect();
    // what the crate root re-exports: `crate::Drive` is engine's Drive
    let reexports: BTreeMap<String, ModPath> = names[&Vec::new()]
        .imports
        .iter()
        .filter(|(_, p)| p.first().map(|s| s != "std").unwrap_or(false))
        .filter_map(|(n, p)| Some((n.clone(), absolute(&[], p)?)))
        .collect();
    let mut uses = BTreeMap::new();
    for (m, n) in &names {
        let mut deps = BTreeSet::new();
        for p in &n.paths {
            let Some(mut abs) = absolute(m, p) else {
                continue;
            };
            if let Some(full) = abs.first().and_then(|s| reexports.get(s)) {
                if !modules.contains(&abs[..1]) {
                    abs = [full.clone(), abs[1..].to_vec()].concat();
                }
            }
            while !abs.is_empty() && !modules.contains(&abs) {
                abs.pop();
            }
            if !abs.is_empty() && !m.starts_with(&abs) && !abs.starts_with(m) {
                deps.insert(abs);
            }
        }
        uses.insert(m.clone(), deps);
    }
    Crate { files, uses }
}

/// Every module (by name) and the modules it uses.
fn module_graph(c: &Crate) -> BTreeMap<String, BTreeSet<String>> {
    c.uses
        .iter()
        .map(|(m, d)| (m.join("::"), d.iter().map(|x| x.join("::")).collect()))
        .collect()
}

/// The top-level modules' graph: `a` -> `b` when any module under `a` uses one under `b`.
fn top_graph(c: &Crate) -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, deps) in &c.uses {
        let Some(a) = m.first() else { continue };
        let e = g.entry(a.clone()).or_default();
        e.extend(deps.iter().map(|d| d[0].clone()).filter(|d| d != a));
    }
    g
}

/// The circles of a graph: each set of nodes that reach one another, sorted.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for start in g.keys() {
        if !g[start].iter().any(|n| reaches(g, n, start)) {
            continue;
        }
        let c: Vec<String> = g
            .keys()
            .filter(|k| reaches(g, k, start) && reaches(g, start, k))
            .cloned()
            .collect();
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

fn reaches(g: &BTreeMap<String, BTreeSet<String>>, a: &str, b: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![a.to_string()];
    while let Some(n) = stack.pop() {
        if n == b {
            return true;
        }
        if seen.insert(n.clone()) {
            stack.extend(g.get(&n).into_iter().flatten().cloned());
        }
    }
    false
}

fn layer(layers: &[(&str, &[&str])], top: &str) -> Option<usize> {
    layers.iter().position(|(_, l)| l.contains(&top))
}

/// Each use of a module of a higher layer, as "a::b uses c::d".
fn upward(c: &Crate, layers: &[(&str, &[&str])]) -> Vec<String> {
    let mut out = Vec::new();
    for (m, deps) in c.uses.iter().filter(|(m, _)| !m.is_empty()) {
        for d in deps {
            if layer(layers, &d[0]) > layer(layers, &m[0]) {
                out.push(format!("{} uses {}", m.join("::"), d.join("::")));
            }
        }
    }
    out
}

/// Modules whose file is not where their module path puts it (src/a/b.rs or
/// src/a/b/mod.rs; an inline module is in its parent's file).
fn misplaced(c: &Crate, root: &Path) -> Vec<String> {
    c.files
        .iter()
        .filter(|(m, _)| !m.is_empty())
        .filter(|(m, f)| {
            let parent = &c.files[&m[..m.len() - 1].to_vec()];
            let dir: PathBuf = m.iter().fold(root.to_path_buf(), |d, s| d.join(s));
            *f != parent && **f != dir.with_extension("rs") && **f != dir.join("mod.rs")
        })
        .map(|(m, f)| format!("{} is in {}", m.join("::"), f.display()))
        .collect()
}

#[test]
fn the_simulators_modules_never_use_a_higher_layer_or_form_a_circle() {
    let root = crate_dir("ssdsim");
    let c = load(&root);
    println!("layers of the simulator, lowest first:");
    for (i, (what, mods)) in LAYERS.iter().enumerate() {
        println!("  {i} {what}: {}", mods.join(", "));
    }
    let g = top_graph(&c);
    for (m, deps) in &g {
        println!(
            "  {m} ({}) uses {}",
            layer(LAYERS, m).map_or("-".into(), |l| l.to_string()),
            deps.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let unknown: Vec<&String> = g.keys().filter(|m| layer(LAYERS, m).is_none()).collect();
    assert!(
        unknown.is_empty(),
        "modules without a layer (add them to LAYERS): {unknown:?}"
    );
    assert_eq!(upward(&c, LAYERS), Vec::<String>::new(), "upward uses");
    assert_eq!(
        cycles(&g),
        Vec::<Vec<String>>::new(),
        "circles between top-level modules"
    );
    assert_eq!(
        cycles(&module_graph(&c)),
        Vec::<Vec<String>>::new(),
        "circles between modules"
    );
    assert_eq!(
        misplaced(&c, &root),
        Vec::<String>::new(),
        "files not where their module path says"
    );
}

#[test]
fn the_bindings_modules_form_no_circle() {
    for name in ["ssdsim-py", "ssdsim-nbd"] {
        let c = load(&crate_dir(name));
        assert_eq!(
            cycles(&module_graph(&c)),
            Vec::<Vec<String>>::new(),
            "{name}"
        );
        assert_eq!(
            misplaced(&c, &crate_dir(name)),
            Vec::<String>::new(),
            "{name}"
        );
    }
}

#[test]
fn the_check_reads_modules_as_the_compiler_does() {
    // A crate whose low module names its high one three ways the checks must see: through
    // a name the root re-exports, inside a macro's arguments, and from a #[path] child.
    let dir = std::env::temp_dir().join(format!("ssdsim-architecture-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("elsewhere")).unwrap();
    let put = |f: &str, text: &str| std::fs::write(src.join(f), text).unwrap();
    put(
        "lib.rs",
        "pub mod low;\npub mod high;\npub use high::Thing;\n",
    );
    put("low.rs", "#[path = \"elsewhere/kid.rs\"]\npub mod kid;\npub fn f() -> crate::Thing { crate::Thing }\n");
    put(
        "elsewhere/kid.rs",
        "pub fn g() { println!(\"{:?}\", crate::high::h()); }\n",
    );
    put(
        "high.rs",
        "#[derive(Debug)]\npub struct Thing;\npub fn h() {}\nfn k() { super::low::kid::g() }\n\
                    #[cfg(test)]\nmod tests { fn t() { crate::low::f(); } }\n",
    );
    let c = load(&src);
    std::fs::remove_dir_all(&dir).unwrap();
    let m = |s: &str| s.split("::").map(String::from).collect::<ModPath>();
    assert_eq!(c.files[&m("low::kid")], src.join("elsewhere/kid.rs"));
    assert_eq!(
        c.uses[&m("low")],
        BTreeSet::from([m("high")]),
        "a root re-export is its module"
    );
    assert_eq!(
        c.uses[&m("low::kid")],
        BTreeSet::from([m("high")]),
        "a path in a macro"
    );
    assert_eq!(
        c.uses[&m("high")],
        BTreeSet::from([m("low::kid")]),
        "test modules apart"
    );
    assert_eq!(
        misplaced(&c, &src),
        vec![format!(
            "low::kid is in {}",
            src.join("elsewhere/kid.rs").display()
        )]
    );
    let layers: &[(&str, &[&str])] = &[("low", &["low"]), ("high", &["high"])];
    assert_eq!(
        upward(&c, layers),
        vec!["low uses high", "low::kid uses high"]
    );
    assert_eq!(
        cycles(&top_graph(&c)),
        vec![vec![m("high")[0].clone(), "low".to_string()]]
    );
    // the simulator itself, read the same way
    let s = load(&crate_dir("ssdsim"));
    assert!(s.uses[&m("fiojob::run")].contains(&m("engine")));
    assert!(s.uses[&m("ftl::footprint")].contains(&m("util::memory")));
    assert!(s.files.contains_key(&m("engine::session")));
}
