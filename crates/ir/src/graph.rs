//! Graph algorithms the passes share: the strongly connected components of the predicate
//! dependency graph serve the strata (`plan`) and the check that no cycle runs through
//! a negation (`validate`).

/// The strongly connected components of the graph, each as soon as the depth-first
/// search leaves its root: dependents first for edges pointing at dependents. Nodes are
/// searched in index order and successors from the last added, as petgraph's
/// `tarjan_scc` does, so the order of the strata is the one it gave; unlike it, the
/// search keeps its own stack, so a chain of a hundred thousand predicates is no
/// deeper a recursion than one predicate.
pub fn strongly_connected(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = successors.len();
    let mut number = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut components = Vec::new();
    let mut counter = 0;
    // The search path: each node with how many of its successors it has looked at.
    let mut frames: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if number[root] != UNSEEN {
            continue;
        }
        frames.push((root, 0));
        while let Some(&(v, seen)) = frames.last() {
            if seen == 0 && number[v] == UNSEEN {
                number[v] = counter;
                low[v] = counter;
                counter += 1;
                on_stack[v] = true;
                stack.push(v);
            }
            let out = &successors[v];
            if seen < out.len() {
                let w = out[out.len() - 1 - seen];
                frames.last_mut().expect("a frame is on top").1 += 1;
                if number[w] == UNSEEN {
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(number[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == number[v] {
                let at = stack.iter().rposition(|&w| w == v).expect("the root is on the stack");
                let component = stack.split_off(at);
                for &w in &component {
                    on_stack[w] = false;
                }
                components.push(component);
            }
        }
    }
    components
}
