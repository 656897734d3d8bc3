//! The engine is layered without cycles: the modules of `src/` that each module names form a
//! graph without a cycle, and the connection core (`conn` and what it uses) knows neither the
//! drivers, the TLS layer nor the server.
#![cfg(not(miri))]

#[path = "../../tools/module_graph.rs"]
mod graph;

/// The layers above the core: the drivers, the TLS layer, the workers and the server.
const DRIVERS_AND_SERVER: [&str; 7] =
    ["epoll", "uring", "link", "tls", "layer", "worker", "server"];

#[test]
fn modules_form_no_cycle() {
    let graph = graph::module_graph(env!("CARGO_MANIFEST_DIR"));
    assert!(
        graph["conn"].contains(&"exchange".to_owned()),
        "parsed {graph:?}"
    );
    graph::assert_no_cycle(&graph);
}

#[test]
fn the_core_knows_neither_drivers_nor_server() {
    let graph = graph::module_graph(env!("CARGO_MANIFEST_DIR"));
    // Everything `conn` reaches.
    let mut reached = vec!["conn".to_owned()];
    let mut i = 0;
    while i < reached.len() {
        for dep in &graph[&reached[i]] {
            if !reached.contains(dep) {
                reached.push(dep.clone());
            }
        }
        i += 1;
    }
    for m in DRIVERS_AND_SERVER {
        assert!(
            !reached.contains(&m.to_owned()),
            "the core reaches {m}: {reached:?}"
        );
    }
}
