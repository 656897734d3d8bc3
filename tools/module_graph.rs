//! The module graph of a crate and its cycles, for the `module_graph` tests of the workspace's
//! crates (each includes this file): one concept per module, and no module cycles.

use std::collections::BTreeMap;
use std::path::Path;

/// Module name -> the crate modules its code names, for the modules of the crate in `root`
/// (its `src/*.rs`, `lib.rs` left out).
pub fn module_graph(root: &str) -> BTreeMap<String, Vec<String>> {
    let src = Path::new(root).join("src");
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            files.insert(name, std::fs::read_to_string(&path).unwrap());
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
