//! Independent answers for the closure workloads by breadth-first search, so that a run
//! fails when every system agrees on a wrong count.

use crate::workload::Graph;

/// Successor lists of a graph.
fn successors(nodes: u32, edges: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let mut succ = vec![Vec::new(); nodes as usize];
    for &(u, v) in edges {
        succ[u as usize].push(v);
    }
    succ
}

/// `reached[v]`: whether `v` is reachable from `source` by one or more edges.
pub fn reachable_from(nodes: u32, edges: &[(u32, u32)], source: u32) -> Vec<bool> {
    let succ = successors(nodes, edges);
    let mut reached = vec![false; nodes as usize];
    let mut stack: Vec<u32> = succ[source as usize].clone();
    while let Some(x) = stack.pop() {
        if !std::mem::replace(&mut reached[x as usize], true) {
            stack.extend(&succ[x as usize]);
        }
    }
    reached
}

/// The smallest node whose shortest path from `source` has exactly `distance` edges.
pub fn node_at_distance(nodes: u32, edges: &[(u32, u32)], source: u32, distance: u32) -> Option<u32> {
    let succ = successors(nodes, edges);
    let mut depth = vec![u32::MAX; nodes as usize];
    depth[source as usize] = 0;
    let mut frontier = vec![source];
    for d in 1..=distance {
        let mut next = Vec::new();
        for &x in &frontier {
            for &y in &succ[x as usize] {
                if depth[y as usize] == u32::MAX {
                    depth[y as usize] = d;
                    next.push(y);
                }
            }
        }
        frontier = next;
    }
    frontier.into_iter().min()
}

/// The number of pairs `(x, y)` with `y` reachable from `x`: the size of the closure.
pub fn closure_size(nodes: u32, edges: &[(u32, u32)]) -> u64 {
    let succ = successors(nodes, edges);
    // One visit stamp per node instead of clearing a visited array for every source.
    let mut stamp = vec![u32::MAX; nodes as usize];
    let mut stack: Vec<u32> = Vec::new();
    let mut total = 0u64;
    for s in 0..nodes {
        stack.extend(&succ[s as usize]);
        while let Some(x) = stack.pop() {
            if stamp[x as usize] != s {
                stamp[x as usize] = s;
                total += 1;
                stack.extend(&succ[x as usize]);
            }
        }
    }
    total
}

/// The closure size and the nodes reachable from node 0 of a graph workload.
pub fn graph_facts(graph: Graph) -> (u64, Vec<bool>) {
    let edges = graph.edges();
    (closure_size(graph.nodes(), &edges), reachable_from(graph.nodes(), &edges, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_and_cycle() {
        let chain = Graph::Chain { nodes: 10 }.edges();
        assert_eq!(closure_size(10, &chain), 45);
        assert_eq!(reachable_from(10, &chain, 0).iter().filter(|&&r| r).count(), 9);
        let cycle = [(0, 1), (1, 2), (2, 0)];
        assert_eq!(closure_size(3, &cycle), 9);
        assert!(reachable_from(3, &cycle, 0)[0]);
        assert_eq!(node_at_distance(10, &chain, 0, 3), Some(3));
        assert_eq!(node_at_distance(3, &cycle, 0, 2), Some(2));
        assert_eq!(node_at_distance(3, &cycle, 0, 3), None, "node 0 was reached at distance 0");
    }
}
