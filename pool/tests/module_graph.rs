//! One concept per module, and no module cycles: the modules of `src/` that each module names
//! (`use crate::x`, `crate::x::f()` outside comments) form a graph without a cycle.
#![cfg(not(miri))]

#[path = "../../tools/module_graph.rs"]
mod graph;

#[test]
fn modules_form_no_cycle() {
    let graph = graph::module_graph(env!("CARGO_MANIFEST_DIR"));
    assert!(
        graph["pool"].contains(&"slab".to_owned()),
        "parsed {graph:?}"
    );
    graph::assert_no_cycle(&graph);
}
