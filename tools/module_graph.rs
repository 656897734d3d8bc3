//! The module graph of a crate and its cycles, for the `module_graph` tests of the workspace's
//! crates (each includes this file): one concept per module, and no module cycles.

use std::collections::BTreeMap;
use std::path::Path;

/// Module name -> the crate modules its code names, for the modules of the crate in `root`
/// (its `src/**/*.rs`, `lib.rs` left out; a folder's `mod.rs` is the folder's module). Module
/// names are taken to be unique in the crate, as the crates that use this keep them: every
/// module is reachable as `crate::name`.
pub fn module_graph(root: &str) -> BTreeMap<String, Vec<String>> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut dirs = vec![Path::new(root).join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                let name = if stem == "mod" {
                    dir.file_name().unwrap().to_string_lossy().into_owned()
                } else {
                    stem
                };
                let old = files.insert(name.clone(), std::fs::read_to_string(&path).unwrap());
                assert!(old.is_none(), "two modules named {name}");
            }
        }
    }
    files.remove("lib");
    let mut graph = BTreeMap::new();
    for (name, text) in &files {
        let mut deps: Vec<String> = Vec::new();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                let dep: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if dep != *name && files.contains_key(&dep) && !deps.contains(&dep) {
                    deps.push(dep);
                }
            }
        }
        graph.insert(name.clone(), deps);
    }
    graph
}

/// A cycle through `node`, if depth-first search from it finds one.
pub fn find_cycle(
    graph: &BTreeMap<String, Vec<String>>,
    node: &str,
    path: &mut Vec<String>,
    done: &mut Vec<String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|n| n == node) {
        let mut cycle = path[at..].to_vec();
        cycle.push(node.to_owned());
        return Some(cycle);
    }
    if done.iter().any(|n| n == node) {
        return None;
    }
    path.push(node.to_owned());
    for dep in &graph[node] {
        if let Some(cycle) = find_cycle(graph, dep, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done.push(node.to_owned());
    None
}

/// Panics with the first cycle found in `graph`.
pub fn assert_no_cycle(graph: &BTreeMap<String, Vec<String>>) {
    let mut done = Vec::new();
    for node in graph.keys() {
        if let Some(cycle) = find_cycle(graph, node, &mut Vec::new(), &mut done) {
            panic!("module cycle: {}", cycle.join(" -> "));
        }
    }
}
